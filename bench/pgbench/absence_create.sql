-- POST /api/absences/ as the service runs it, without HTTP: an employee files a one-day CP
-- request for themselves (every rule, the counter reservation, the deciders' notifications,
-- the audit line), pipelined (one round trip).
-- Distinct employees and dates: slot = base + n * clients + client_id (n counts this
-- client's transactions), employee = slot mod employees, date = days[slot / employees].
--   -D base= -D clients= -D employees= -D acc_base= -D emp_base= -D type= -D days={...} -D n=0
\set n :n + 1
\set slot :base + (:n - 1) * :clients + :client_id
\set e :slot % :employees
\set acc :acc_base + :e
\set emp :emp_base + :e
\set d :slot / :employees + 1
\startpipeline
begin;
select app_private.begin_request(:acc);
set local role wfm_visitor;
select app_public.absence_create(p_employee => :emp::int, p_type => :type::int, p_date_start => ((:days)::date[])[:d::int], p_public_url => 'http://localhost');
commit;
\endpipeline
