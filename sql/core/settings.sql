-- Service settings readable by SQL (retention, lifetimes). Secrets (SMTP password, JWT
-- secret) come from the environment, never from here.
create table if not exists app_private.settings (
  key text primary key,
  value jsonb not null,
  description text not null
);
insert into app_private.settings (key, value, description) values
  ('audit_retention_days', '1095', 'Durée de conservation du journal d’audit, en jours'),
  ('password_reset_lifetime_minutes', '60', 'Durée de validité d’un lien de réinitialisation'),
  ('invitation_lifetime_minutes', '10080', 'Durée de validité d’une invitation à définir son mot de passe')
on conflict do nothing;

create or replace function app_hidden.setting(p_key text) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.value from app_private.settings s where s.key = p_key;
$$;
