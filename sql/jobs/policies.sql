-- Job tables are private: RLS on and no policy, so only the owner (the worker's connection
-- and security definer functions) reads or writes them.
alter table app_private.job_schedules enable row level security;
alter table app_private.job_runs enable row level security;
alter table app_private.reminders_sent enable row level security;
