-- GET /api/auth/me/ as the service runs it, without HTTP: begin, reload the account,
-- switch to the visitor role, the route's one function, commit; pipelined (one round trip).
--   -D acc=<account id>
\startpipeline
begin;
select app_private.begin_request(:acc);
set local role wfm_visitor;
select app_public.me();
commit;
\endpipeline
