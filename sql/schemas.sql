-- Schemas and extensions.
--   app_public : what the REST layer and PostGraphile may call (tables behind RLS, API functions)
--   app_hidden : helpers callable by the request roles but not exposed (perimeter, clock, errors)
--   app_private: secrets, journals, audit, internal functions; no request role has access
create extension if not exists btree_gist with schema public;
create extension if not exists pgcrypto with schema public;

create schema if not exists app_public;
create schema if not exists app_hidden;
create schema if not exists app_private;

-- Nothing is reachable unless granted explicitly below or per object.
revoke all on schema public from public;
grant usage on schema public to wfm_visitor, wfm_api, wfm_authenticator;
alter default privileges revoke all on functions from public;
alter default privileges revoke all on sequences from public;

grant usage on schema app_public to wfm_visitor, wfm_api;
grant usage on schema app_hidden to wfm_visitor, wfm_api;
-- app_private: no grant; reached only through security definer functions owned by the owner.
grant usage on schema app_private to wfm_authenticator;
