-- The rules of the employee record, one function each, named after the rule
-- (docs/architecture.md, "Where each rule lives"). SPEC leaves the record's body "not shown"
-- (Documents and other routes); its rules come from SPEC Permissions (who writes what), SPEC
-- Errors (404 before 403), SPEC Authentication rule 4 and the API's own field rules.
-- app_hidden.employee_save (sql/employees/api.sql) composes them in a fixed order; the
-- organisation import (sql/org/import.sql) and the emergency contacts (sql/employees/annexes.sql)
-- ask the shared ones (e-mail, social security number, username, weekly hours).
--
-- A field rule answers the message refusing the value (null when accepted); a list rule answers
-- its messages in order (empty when accepted). They write nothing, so pgTAP calls them directly.

-- Thresholds of the record, named once.
create or replace function app_hidden.birth_date_min() returns date
language sql immutable as $$ select date '1900-01-01' $$;
comment on function app_hidden.birth_date_min() is
'Employee record: the earliest birth date accepted.';

create or replace function app_hidden.weekly_hours_max() returns numeric
language sql immutable as $$ select 48::numeric $$;
comment on function app_hidden.weekly_hours_max() is
'Contract: the weekly working time is at most 48 hours (French legal maximum).';

-- Shared formats (API, import, emergency contacts).
create or replace function app_hidden.email_well_formed(p_email text) returns boolean
language sql immutable as $$ select p_email ~ app_hidden.email_pattern() $$;
comment on function app_hidden.email_well_formed(text) is
'An e-mail address has one @, no blank, and a dot in its domain (null for null).';

create or replace function app_hidden.email_acceptable(p_email text) returns boolean
language sql immutable as $$
  select app_hidden.email_well_formed(p_email) and char_length(p_email) <= app_hidden.email_max_length()
$$;
comment on function app_hidden.email_acceptable(text) is
'An e-mail address entered through the API: well formed and at most email_max_length() characters (null for null).';

create or replace function app_hidden.social_security_number_well_formed(p_number text) returns boolean
language sql immutable as $$
  select p_number ~ app_hidden.social_security_number_pattern()
$$;
comment on function app_hidden.social_security_number_well_formed(text) is
'SPEC Permissions (employee.view_social_security_number): a French social security number, 13 characters
(sex, year, month, department with 2A/2B, commune, order) or 15 with the key (null for null).';

create or replace function app_hidden.username_well_formed(p_username text) returns boolean
language sql immutable as $$
  select p_username ~ app_hidden.username_pattern()
$$;
comment on function app_hidden.username_well_formed(text) is
'An account username: username_min_length() to username_max_length() letters, digits and . _ @ + - (null for null).';

create or replace function app_hidden.weekly_hours_in_range(p_hours numeric) returns boolean
language sql immutable as $$ select round(p_hours, 2) > 0 and p_hours <= app_hidden.weekly_hours_max() $$;
comment on function app_hidden.weekly_hours_in_range(numeric) is
'Contract: the weekly working time is more than 0 as stored (two decimals) and at most weekly_hours_max()
hours (null for null).';

create or replace function app_hidden.add_error_list(p_errors jsonb, p_field text, p_messages text[])
returns jsonb
language sql immutable as $$
  select case when cardinality(p_messages) > 0
              then coalesce(p_errors, '{}'::jsonb)
                   || jsonb_build_object(coalesce(p_field, 'non_field_errors'),
                        coalesce(p_errors -> coalesce(p_field, 'non_field_errors'), '[]'::jsonb) || to_jsonb(p_messages))
              else p_errors end;
$$;
comment on function app_hidden.add_error_list(jsonb, text, text[]) is
'Field errors: a list of messages appended under one field (nothing when the list is empty).';

-- Appends the messages that are not null under a field (a rule that accepted adds nothing).
create or replace function app_hidden.add_refusals(p_errors jsonb, p_field text, variadic p_messages text[])
returns jsonb
language sql immutable as $$
  select coalesce((select app_hidden.add_error_list(p_errors, p_field, array_agg(m order by n))
                   from unnest(p_messages) with ordinality u(m, n) where m is not null), p_errors);
$$;
comment on function app_hidden.add_refusals(jsonb, text, text[]) is
'Field errors: the refusals of the rules of one field appended under it, in order; nulls (accepted) skipped.';

-- Access to the record, in this order (before any field is read).

create or replace function app_hidden.employee_refuse_ssn_key(p_id int) returns void
language plpgsql stable as $$
begin
  if p_id is null and not app_hidden.current_account_has('employee.view_social_security_number')
     or p_id is not null and not app_hidden.may(app_hidden.current_account_id(), 'employee.view_social_security_number', p_id) then
    perform app_hidden.forbidden('Vous n’avez pas le droit de lire ni d’écrire le numéro de sécurité sociale : '
                                 'retirez ce champ de la requête.', 'WF501');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_ssn_key(integer) is
'SPEC Permissions, employee.view_social_security_number: a write carrying the key social_security_number
by a caller who may not read the number of that record (p_id; null: a new record) is refused (403 WF501).';

create or replace function app_hidden.employee_refuse_ssn_on_created_record(p_id int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.view_social_security_number', p_id) then
    perform app_hidden.forbidden('Vous n’avez pas le droit d’écrire le numéro de sécurité sociale de ce salarié : '
                                 'retirez ce champ de la requête.', 'WF501');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_ssn_on_created_record(integer) is
'SPEC Permissions, employee.view_social_security_number: the number of a record just created needs the
right on that record too (its workplace may lie outside the caller''s perimeter; 403 WF501).';

create or replace function app_hidden.employee_refuse_record_write(p_id int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('employee.change_employee_record') then
    if p_id is null then
      perform app_hidden.forbidden('Vous n’avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n’avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
  end if;
  if p_id is not null and not app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_id) then
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_record_write(integer) is
'SPEC Permissions, employee.change_employee_record, and SPEC Errors (404 rather than 403): creating a
record needs the right (403 WF502); changing one needs it on that record, a record outside the perimeter
being not found.';

-- Field rules.

create or replace function app_hidden.employee_name_refusal(p_name text, p_required boolean, p_missing_message text)
returns text
language sql stable as $$
  select case when p_required and p_name is null then p_missing_message
              when char_length(p_name) > app_hidden.person_name_max_length()
              then app_hidden.max_length_message(app_hidden.person_name_max_length()) end;
$$;
comment on function app_hidden.employee_name_refusal(text, boolean, text) is
'Employee record, first_name and last_name: required (p_missing_message when p_required and absent), at
most person_name_max_length() characters.';

create or replace function app_hidden.employee_email_refusal(p_email text) returns text
language sql immutable as $$
  select 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).'
  where p_email is not null and app_hidden.email_acceptable(p_email) is not true;
$$;
comment on function app_hidden.employee_email_refusal(text) is
'Employee record, professional_email: empty or a well-formed address of at most email_max_length() characters.';

create or replace function app_hidden.employee_email_takeover_refusal(p_id int, p_old text, p_new text) returns text
language sql stable as $$
  select 'Ce compte détient des droits que vous ne couvrez pas : seul un responsable qui les couvre peut changer '
         'son adresse e-mail (elle reçoit les liens de réinitialisation du mot de passe).'
  where p_id is not null and p_new is distinct from p_old
    and app_hidden.account_rights_covered(app_private.employee_account_id(p_id)) is not true;
$$;
comment on function app_hidden.employee_email_takeover_refusal(integer, text, text) is
'SPEC Authentication rule 4 (the professional e-mail receives the password links): the address of a record
whose account holds rights the editor does not cover (account_rights_covered) is changed only by an editor
who covers them (issue 11).';

create or replace function app_hidden.employee_birth_date_refusal(p_birth_date date) returns text
language sql stable as $$
  select 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.'
  where p_birth_date >= app_hidden.today() or p_birth_date < app_hidden.birth_date_min();
$$;
comment on function app_hidden.employee_birth_date_refusal(date) is
'Employee record, birth_date: empty, or in the past and not before birth_date_min().';

create or replace function app_hidden.establishment_unknown_refusal(p_establishment int) returns text
language sql stable as $$
  select format('Établissement n° %s introuvable.', p_establishment)
  where p_establishment is not null
    and not exists (select 1 from app_public.establishments e where e.id = p_establishment);
$$;
comment on function app_hidden.establishment_unknown_refusal(integer) is
'Employee record, main_establishment: an establishment that exists (or none).';

create or replace function app_hidden.employee_main_workplace_perimeter_refusal(p_main int, p_changed boolean, p_scope int[])
returns text
language sql immutable as $$
  select case when p_main is null
              then 'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.'
              when not p_main = any (p_scope) then 'Cet établissement n’est pas dans votre périmètre.' end
  where p_scope is not null and p_changed;
$$;
comment on function app_hidden.employee_main_workplace_perimeter_refusal(integer, boolean, integer[]) is
'SPEC Permissions, employee.change_employee_record over a perimeter (p_scope; null: the whole association):
a restricted writer who sets the main workplace (p_changed) sets one of its establishments, never none (the
record would leave its perimeter).';

create or replace function app_hidden.employee_secondary_workplaces_unknown_refusal(p_secondaries int[]) returns text
language sql stable as $$
  select format('Établissement introuvable : %s.', string_agg(s.id::text, ', '))
  from unnest(p_secondaries) s(id)
  where not exists (select 1 from app_public.establishments e where e.id = s.id)
  having count(*) > 0;
$$;
comment on function app_hidden.employee_secondary_workplaces_unknown_refusal(integer[]) is
'Employee record, secondary_establishments: every establishment listed exists.';

create or replace function app_hidden.employee_main_not_secondary_refusal(p_main int, p_secondaries int[]) returns text
language sql immutable as $$
  select 'L’établissement principal ne peut pas être aussi un établissement secondaire.'
  where p_main = any (p_secondaries);
$$;
comment on function app_hidden.employee_main_not_secondary_refusal(integer, integer[]) is
'Employee record: the main workplace is not also a secondary workplace.';

create or replace function app_hidden.employee_secondary_workplaces_perimeter_refusal(
  p_secondaries int[], p_old_secondaries int[], p_scope int[]) returns text
language sql immutable as $$
  select 'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.'
  where p_scope is not null and exists (
    select 1 from ((select unnest(p_secondaries) except select unnest(p_old_secondaries))
                   union
                   (select unnest(p_old_secondaries) except select unnest(p_secondaries))) d(id)
    where not d.id = any (p_scope));
$$;
comment on function app_hidden.employee_secondary_workplaces_perimeter_refusal(integer[], integer[], integer[]) is
'SPEC Permissions, employee.change_employee_record over a perimeter (p_scope): a restricted writer adds or
removes secondary workplaces of its establishments only.';

create or replace function app_hidden.employee_ssn_refusal(p_number text) returns text
language sql immutable as $$
  select 'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).'
  where p_number is not null and app_hidden.social_security_number_well_formed(p_number) is not true;
$$;
comment on function app_hidden.employee_ssn_refusal(text) is
'SPEC Permissions, employee.view_social_security_number: the number written is empty or well formed
(social_security_number_well_formed).';

-- Is a username free (case-insensitive), whatever accounts the caller may read?
create or replace function app_private.username_taken(p_username text) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a where lower(a.username) = lower(p_username));
$$;

create or replace function app_hidden.employee_username_refusal(p_creating boolean, p_username text) returns text
language sql stable as $$
  select case when not p_creating then 'L’identifiant se choisit à la création de la fiche seulement.'
              when app_hidden.username_well_formed(p_username) is false
              then format('Identifiant invalide : de %s à %s caractères parmi lettres, chiffres et . _ @ + -.',
                          app_hidden.username_min_length(), app_hidden.username_max_length())
              when app_private.username_taken(p_username)
              then format('L’identifiant « %s » est déjà utilisé.', p_username) end;
$$;
comment on function app_hidden.employee_username_refusal(boolean, text) is
'SPEC Authentication rule 4 (the account opened with the record): the username is chosen at creation only,
well formed (username_well_formed) and free, case-insensitively (empty: derived from the name).';

-- Contracts: the list sent replaces the record's contracts.

create or replace function app_hidden.contract_period_refusals(p_start date, p_end date, p_trial_end date) returns text[]
language sql immutable as $$
  select case when p_start is null then array['la date de début est obligatoire.']
              else array_remove(array[
                     case when p_end < p_start then 'la date de fin précède la date de début.' end,
                     case when p_trial_end < p_start then 'la fin de période d’essai précède la date de début.'
                          when p_trial_end > p_end then 'la fin de période d’essai dépasse la fin du contrat.' end],
                   null) end;
$$;
comment on function app_hidden.contract_period_refusals(date, date, date) is
'Contract: a start date; the end, when given, not before the start; the end of the trial period between
the start and the end.';

create or replace function app_hidden.employee_contract_refusals(p_employee int, p_rank int, p_item jsonb) returns text[]
language plpgsql stable as $$
declare
  v_label text := format('Contrat n° %s : ', p_rank);
  v_messages text[] := '{}';
  v_id int;
  v_type int;
  v_start date;
  v_end date;
  v_trial date;
  v_job text;
  v_hours numeric;
begin
  if jsonb_typeof(p_item) <> 'object' then
    return array[v_label || 'un objet est attendu.'];
  end if;
  v_id := app_hidden.in_int(p_item, 'id', 'contracts');
  if v_id is not null and (p_employee is null or not exists (select 1 from app_public.contracts c
                                                              where c.id = v_id and c.employee_id = p_employee)) then
    v_messages := v_messages || (v_label || 'ce contrat n’appartient pas à ce salarié.');
  end if;
  v_type := app_hidden.in_int(p_item, 'type', 'contracts');
  if v_type is null then
    v_messages := v_messages || (v_label || 'le type de contrat est obligatoire.');
  elsif not exists (select 1 from app_public.contract_types ct where ct.id = v_type) then
    v_messages := v_messages || (v_label || format('type de contrat n° %s introuvable.', v_type));
  end if;
  v_start := app_hidden.in_date(p_item, 'start_date', 'contracts');
  v_end := app_hidden.in_date(p_item, 'end_date', 'contracts');
  v_trial := app_hidden.in_date(p_item, 'trial_end_date', 'contracts');
  v_messages := v_messages || array(select v_label || m from unnest(app_hidden.contract_period_refusals(v_start, v_end, v_trial)) m);
  v_job := app_hidden.in_trimmed(p_item, 'job_title', 'contracts');
  if char_length(v_job) > app_hidden.job_title_max_length() then
    v_messages := v_messages || (v_label || format('l’intitulé de poste fait au plus %s caractères.', app_hidden.job_title_max_length()));
  end if;
  v_hours := app_hidden.in_numeric(p_item, 'weekly_hours', 'contracts');
  if v_hours is not null and app_hidden.weekly_hours_in_range(v_hours) is not true then
    v_messages := v_messages || (v_label || format('la durée hebdomadaire doit être comprise entre 0 et %s heures.',
                                                   app_hidden.weekly_hours_max()));
  end if;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_contract_refusals(integer, integer, jsonb) is
'Employee record, one contract of the list (rank p_rank): an object; its id, when given, a contract of
this employee; a known contract type; a coherent period (contract_period_refusals); a job title of at most
job_title_max_length() characters; weekly hours in range (weekly_hours_in_range).';

-- The period of a contract item as the overlap rule reads it (empty when it has none or is incoherent).
create or replace function app_hidden.contract_item_period(p_item jsonb) returns daterange
language sql stable as $$
  select case when jsonb_typeof(p_item) = 'object' and (p_item ->> 'start_date') is not null
                   and ((p_item ->> 'end_date') is null or (p_item ->> 'end_date')::date >= (p_item ->> 'start_date')::date)
              then daterange((p_item ->> 'start_date')::date, (p_item ->> 'end_date')::date, '[]')
              else 'empty'::daterange end;
$$;
comment on function app_hidden.contract_item_period(jsonb) is
'Contract: the period of a contract item of a list already read (empty without a start or when it ends before it starts).';

create or replace function app_hidden.employee_contract_overlap_refusals(p_contracts jsonb, p_rank int) returns text[]
language sql stable as $$
  select coalesce(array_agg(format('Les contrats n° %s et n° %s se chevauchent : un salarié a un seul contrat à la fois.',
                                   x.rank, p_rank) order by x.rank), '{}')
  from jsonb_array_elements(p_contracts) with ordinality x(item, rank)
  where x.rank < p_rank and jsonb_typeof(x.item) = 'object'
    and app_hidden.contract_item_period(x.item) && app_hidden.contract_item_period(p_contracts -> (p_rank - 1));
$$;
comment on function app_hidden.employee_contract_overlap_refusals(jsonb, integer) is
'Employee record, contracts: an employee has one contract at a time (the contract of rank p_rank overlaps
no earlier one of the list).';

create or replace function app_hidden.employee_contracts_refusals(p_employee int, p_contracts jsonb) returns text[]
language plpgsql stable as $$
declare
  v_messages text[] := '{}';
  i int;
begin
  for i in 0 .. jsonb_array_length(p_contracts) - 1 loop
    v_messages := v_messages || app_hidden.employee_contract_refusals(p_employee, i + 1, p_contracts -> i)
                             || app_hidden.employee_contract_overlap_refusals(p_contracts, i + 1);
  end loop;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_contracts_refusals(integer, jsonb) is
'Employee record, contracts (SPEC Permissions, employee.change_employee_record): the rules of each contract
and the overlap rule (employee_contract_overlap_refusals), contract after contract.';

-- Team assignments: the list sent replaces the record's assignments.

create or replace function app_hidden.employee_team_assignment_refusals(p_employee int, p_rank int, p_item jsonb, p_scope int[])
returns text[]
language plpgsql stable as $$
declare
  v_label text := format('Affectation n° %s : ', p_rank);
  v_messages text[] := '{}';
  v_id int;
  v_existing app_public.team_assignments;
  v_team int;
  v_start date;
  v_end date;
begin
  if jsonb_typeof(p_item) <> 'object' then
    return array[v_label || 'un objet est attendu.'];
  end if;
  v_id := app_hidden.in_int(p_item, 'id', 'teams');
  if v_id is not null then
    select * into v_existing from app_public.team_assignments ta where ta.id = v_id and ta.employee_id = p_employee;
    if p_employee is null or v_existing.id is null then
      v_messages := v_messages || (v_label || 'cette affectation n’appartient pas à ce salarié.');
    end if;
  end if;
  v_team := app_hidden.in_int(p_item, 'team', 'teams');
  v_start := app_hidden.in_date(p_item, 'start_date', 'teams');
  v_end := app_hidden.in_date(p_item, 'end_date', 'teams');
  if v_team is null then
    v_messages := v_messages || (v_label || 'l’équipe est obligatoire.');
  elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
    v_messages := v_messages || (v_label || format('équipe n° %s introuvable.', v_team));
  elsif p_scope is not null
        and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
             or v_existing.end_date is distinct from v_end)
        and not exists (select 1 from app_public.team_establishments te
                        where te.team_id = v_team and te.establishment_id = any (p_scope)) then
    v_messages := v_messages || (v_label || 'cette équipe n’a aucun établissement dans votre périmètre.');
  end if;
  if v_end < v_start then
    v_messages := v_messages || (v_label || 'la date de fin précède la date de début.');
  end if;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_team_assignment_refusals(integer, integer, jsonb, integer[]) is
'Employee record, one team assignment of the list (rank p_rank): an object; its id, when given, an
assignment of this employee; a known team, which a restricted writer (p_scope) adds or changes only when
it has an establishment in its perimeter (SPEC Permissions rule 7); the end not before the start.';

-- The period of an assignment item as the overlap rule reads it (open bounds allowed; empty when it ends before it starts).
create or replace function app_hidden.team_assignment_item_period(p_item jsonb) returns daterange
language sql stable as $$
  select case when jsonb_typeof(p_item) = 'object'
                   and ((p_item ->> 'end_date') is null or (p_item ->> 'start_date') is null
                        or (p_item ->> 'end_date')::date >= (p_item ->> 'start_date')::date)
              then daterange((p_item ->> 'start_date')::date, (p_item ->> 'end_date')::date, '[]')
              else 'empty'::daterange end;
$$;
comment on function app_hidden.team_assignment_item_period(jsonb) is
'Team assignment: the period of an assignment item of a list already read (empty when it ends before it starts).';

create or replace function app_hidden.employee_team_assignment_overlap_refusals(p_teams jsonb, p_rank int) returns text[]
language sql stable as $$
  select coalesce(array_agg(format('Les affectations n° %s et n° %s à la même équipe se chevauchent.', x.rank, p_rank)
                            order by x.rank), '{}')
  from jsonb_array_elements(p_teams) with ordinality x(item, rank)
  where x.rank < p_rank and jsonb_typeof(x.item) = 'object'
    and (x.item ->> 'team')::int = (p_teams -> (p_rank - 1) ->> 'team')::int
    and app_hidden.team_assignment_item_period(x.item) && app_hidden.team_assignment_item_period(p_teams -> (p_rank - 1));
$$;
comment on function app_hidden.employee_team_assignment_overlap_refusals(jsonb, integer) is
'Employee record, teams: two assignments of the list to the same team do not overlap (the assignment of
rank p_rank against the earlier ones).';

create or replace function app_hidden.employee_team_removal_refusal(p_employee int, p_teams jsonb, p_scope int[]) returns text
language sql stable as $$
  select 'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.'
  where p_scope is not null and p_employee is not null and exists (
    select 1 from app_public.team_assignments ta
    where ta.employee_id = p_employee
      and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(p_teams) x
                        where jsonb_typeof(x) = 'object' and jsonb_typeof(x -> 'id') = 'number')
      and not exists (select 1 from app_public.team_establishments te
                      where te.team_id = ta.team_id and te.establishment_id = any (p_scope)));
$$;
comment on function app_hidden.employee_team_removal_refusal(integer, jsonb, integer[]) is
'SPEC Permissions rule 7: a restricted writer (p_scope) does not remove an assignment of the employee to a
team with no establishment in its perimeter (an assignment left out of the list sent).';

create or replace function app_hidden.employee_team_assignments_refusals(p_employee int, p_teams jsonb, p_scope int[])
returns text[]
language plpgsql stable as $$
declare
  v_messages text[] := '{}';
  i int;
begin
  for i in 0 .. jsonb_array_length(p_teams) - 1 loop
    v_messages := v_messages || app_hidden.employee_team_assignment_refusals(p_employee, i + 1, p_teams -> i, p_scope)
                             || app_hidden.employee_team_assignment_overlap_refusals(p_teams, i + 1);
  end loop;
  return array_remove(v_messages || app_hidden.employee_team_removal_refusal(p_employee, p_teams, p_scope), null);
end;
$$;
comment on function app_hidden.employee_team_assignments_refusals(integer, jsonb, integer[]) is
'Employee record, teams (SPEC Permissions, employee.change_employee_record, and rule 7): the rules of each
assignment, the overlap rule assignment after assignment, then the removal rule of a restricted writer.';
