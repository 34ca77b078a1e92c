-- Runs as the root user after `graphile-migrate reset` recreated the database.
-- The roles are created by the setup step (src/db/roles.ts); reset only hands CONNECT back,
-- because reset revokes it from PUBLIC.
grant connect on database :DATABASE_NAME to wfm_authenticator;
grant all on database :DATABASE_NAME to :DATABASE_OWNER;
