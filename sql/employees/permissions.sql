-- Permissions of the employee record's annexes (SPEC "Documents and other routes": own
-- permissions; the employee reads their own, HR writes).
--
-- | permission                           | roles                                          |
-- |--------------------------------------|------------------------------------------------|
-- | employee.view_emergency_contact      | Admin, RH n1, RH n2, DA, Manager n1, Manager n2 |
-- | employee.change_emergency_contact    | Admin, RH n1, RH n2                            |
-- | employee.view_employee_attachment    | Admin, RH n1, RH n2                            |
-- | employee.change_employee_attachment  | Admin, RH n1, RH n2                            |
--
-- Each applies on the perimeter of the role (establishments of the attribution, extended by
-- on-call periods); the employee always reads their own contacts and attachments.
insert into app_public.permissions (code, description) values
  ('employee.view_emergency_contact', 'Lire les contacts d''urgence des salariés du périmètre'),
  ('employee.change_emergency_contact', 'Modifier les contacts d''urgence des salariés du périmètre'),
  ('employee.view_employee_attachment', 'Lire les pièces jointes des fiches salariés du périmètre'),
  ('employee.change_employee_attachment', 'Déposer, renommer et supprimer les pièces jointes des fiches salariés');

insert into app_public.role_permissions (role_id, permission_code)
select r.id, p.code
from app_public.roles r
join (values
  ('employee.view_emergency_contact', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('employee.change_emergency_contact', array['Admin', 'RH n1', 'RH n2']),
  ('employee.view_employee_attachment', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_employee_attachment', array['Admin', 'RH n1', 'RH n2'])
) as p(code, roles) on r.name = any (p.roles);
