-- PostGraphile smart comments. Aggregates (@graphile/pg-aggregates) are off by default and
-- opted in for the reporting tables; RLS applies to every aggregate as to every row.
comment on table app_public.absences is E'@behavior +aggregates';
comment on table app_public.shift_change_requests is E'@behavior +aggregates';
comment on table app_public.counters is E'@behavior +aggregates';
comment on table app_public.day_modifications is E'@behavior +aggregates';
comment on table app_public.events is E'@behavior +aggregates';
