-- Events and on-call periods: row-level security is enabled here, with the tables; the
-- policies follow the perimeter helpers (sql/events/access.sql, sql/on_call/access.sql).
alter table app_public.events enable row level security;
alter table app_public.event_participants enable row level security;
alter table app_public.on_call_periods enable row level security;
alter table app_public.on_call_period_establishments enable row level security;
