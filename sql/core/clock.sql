-- The business clock. Every rule reads "now" and "today" from here, never from now() or
-- current_date, so that tests can freeze time (app.frozen_now, set per database or per
-- transaction) and so that "today" is the date in the business time zone (TZ_BUSINESS).
create or replace function app_hidden.now() returns timestamptz
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.frozen_now', true), '')::timestamptz, now());
$$;

create or replace function app_hidden.business_timezone() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.business_timezone', true), ''), 'Europe/Paris');
$$;

create or replace function app_hidden.today() returns date
language sql stable parallel safe as $$
  select (app_hidden.now() at time zone app_hidden.business_timezone())::date;
$$;

comment on function app_hidden.today() is
  'Business date: the date of app_hidden.now() in the business time zone (Europe/Paris by default).';
