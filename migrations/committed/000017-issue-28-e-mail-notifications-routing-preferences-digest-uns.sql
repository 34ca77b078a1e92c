--! Previous: sha1:65045fa6643809443da384e92b0173e18781cc32
--! Hash: sha1:7a192d7f31a338286c3fb38f5da19fae8109f48d
--! Message: Issue 28: e-mail notifications (routing, preferences, digest, unsubscribe, outbox from the worker)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included notifications/tables.sql
-- In-app notifications and the e-mail outbox.
create table if not exists app_public.notifications (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  title text not null check (btrim(title) <> '' and length(title) <= 200),
  body text not null check (length(body) <= 10000),
  level text not null default 'info' check (level in ('info', 'warning', 'error')),
  -- What the notification is about, for links in clients.
  model text,
  target_id bigint,
  created_at timestamptz not null default app_hidden.now(),
  read_at timestamptz
);
-- GET /api/notifications/ (own, newest first) and its unread=true filter.
create index if not exists notifications_account_idx on app_public.notifications (account_id, created_at desc, id desc);
create index if not exists notifications_account_unread_idx on app_public.notifications (account_id, created_at desc, id desc)
  where read_at is null;

-- E-mails are written here inside the business transaction and delivered by the worker
-- (task drain_email_outbox) when SMTP settings exist; without them they stay here, visible
-- to staff (GET /api/email-outbox/).
create table if not exists app_private.email_outbox (
  id bigint generated always as identity primary key,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{1,62}$'),
  to_address text not null check (to_address ~ '^[^@\s]+@[^@\s]+$'),
  subject text not null check (btrim(subject) <> ''),
  body_text text not null,
  account_id int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  sent_at timestamptz,
  -- Delivery attempts (failed or not) and the last SMTP error, for staff and retries.
  attempts int not null default 0 check (attempts >= 0),
  last_attempt_at timestamptz,
  last_error text
);
create index if not exists email_outbox_unsent_idx on app_private.email_outbox (id) where sent_at is null;
create index if not exists email_outbox_created_idx on app_private.email_outbox (created_at desc, id desc);

insert into app_private.settings (key, value, description) values
  ('email_max_attempts', '10', 'Nombre de tentatives d''envoi d''un e-mail avant abandon (il reste visible dans la boîte d''envoi)')
on conflict do nothing;

-- ---------------------------------------------------------------------------------------
-- E-mail notifications (issue 28): every notification also goes by e-mail, at once or in a
-- daily digest, per kind and per account (app_private.notification_preferences).
--   kind: own (my requests and my account), decide (requests of others to decide or follow),
--         planning (planning alerts: an event against an absence);
--   path: the address of the item in the web application for this recipient (web/src/lib/paths.ts);
--   email: what the e-mail of this notification is: immediate (written into the outbox by the
--          worker's drain_email_outbox, seconds later), digest (waits for the account's daily digest), none (no address,
--          closed account, or the kind set to never);
--   emailed_at: when it went into the outbox (alone or in a digest).
alter table app_public.notifications add column if not exists kind text not null default 'own';
alter table app_public.notifications add column if not exists path text;
alter table app_public.notifications add column if not exists email text not null default 'none';
alter table app_public.notifications add column if not exists emailed_at timestamptz;
do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'notifications_kind_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_kind_check
      check (kind in ('own', 'decide', 'planning'));
  end if;
  if not exists (select 1 from pg_constraint where conname = 'notifications_path_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_path_check
      check (path ~ '^/[a-z0-9/]*$');
  end if;
  if not exists (select 1 from pg_constraint where conname = 'notifications_email_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_email_check
      check (email in ('immediate', 'digest', 'none'));
  end if;
end;
$$;
-- The worker's queue of the e-mails sent at once (app_private.queue_notification_emails).
create index if not exists notifications_email_waiting_idx on app_public.notifications (id)
  where email = 'immediate' and emailed_at is null;
-- The daily digest reads the waiting notifications of an account.
create index if not exists notifications_digest_idx on app_public.notifications (account_id, id)
  where email = 'digest' and emailed_at is null;

-- The e-mail preferences of an account, per kind: immediate (at once), digest (one e-mail a
-- day at digest_hour, business time zone) or never. No row: every kind at once, digest at 7 h.
-- unsubscribe_token: the secret of the List-Unsubscribe address of its e-mails (it only turns
-- e-mails off; kept in clear so that each e-mail can carry it).
create table if not exists app_private.notification_preferences (
  account_id int primary key references app_public.accounts on delete cascade,
  own text not null default 'immediate' check (own in ('immediate', 'digest', 'never')),
  decide text not null default 'immediate' check (decide in ('immediate', 'digest', 'never')),
  planning text not null default 'immediate' check (planning in ('immediate', 'digest', 'never')),
  digest_hour smallint not null default 7 check (digest_hour between 0 and 23),
  -- Digests count from here: the last digest sent, or when the digest hour or a kind in digest
  -- was chosen (the next digest is due at the first digest hour after it).
  digest_since timestamptz not null default app_hidden.now(),
  unsubscribe_token text not null unique default encode(public.gen_random_bytes(24), 'hex')
    check (unsubscribe_token ~ '^[0-9a-f]{48}$'),
  updated_at timestamptz not null default app_hidden.now()
);

-- An e-mail of a notification has an HTML part and headers (List-Unsubscribe) besides its text.
alter table app_private.email_outbox add column if not exists body_html text;
alter table app_private.email_outbox add column if not exists headers jsonb not null default '{}'::jsonb;
--! EndIncluded notifications/tables.sql
--! Included notifications/functions.sql
-- The notification service: in-app notifications created inside the caller's transaction
-- (a failure aborts the business write: nothing here catches an error), the routing of
-- filings to their deciders, the API of GET /api/notifications/ and the e-mail outbox.

-- The account of an employee record (recipient of "validée"/"refusée" notifications).
create or replace function app_private.employee_account_id(p_employee_id int) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select a.id from app_public.accounts a where a.employee_id = p_employee_id);
end;
$$;

-- Display name of an employee, for notification bodies.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_name(p_employee_id int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = p_employee_id);
end;
$$;

-- Creates one in-app notification for an account, in the caller's transaction.
create or replace function app_private.notify(p_account_id int, p_title text, p_body text, p_level text default 'info',
                                   p_model text default null, p_target_id bigint default null)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id bigint;
begin
  -- Programming errors of a caller: they abort the write (500), they are not user input.
  if p_account_id is null then
    raise exception 'notify: the recipient account is required';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  values (p_account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id)
  returning id into v_id;
  return v_id;
end;
$$;

-- The same notification for several accounts, in one statement (in the order given): a filing
-- notifies its deciders at once instead of one call and one insert each. Returns how many.
create or replace function app_private.notify_each(p_account_ids int[], p_title text, p_body text, p_level text default 'info',
                                        p_model text default null, p_target_id bigint default null)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  -- Programming errors of a caller, as in notify.
  if array_position(p_account_ids, null) is not null then
    raise exception 'notify_each: a recipient account is null';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify_each: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify_each: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  select r.account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id
  from unnest(p_account_ids) with ordinality as r(account_id, ord)
  order by r.ord;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Deciders of a filing about an employee on a date (p_on, the day concerned): active
-- accounts, never the author, that
--   * may decide it (p_decide_permission held through a role attribution active today or
--     explicitly, on a perimeter that covers the employee now; a superuser's flag alone never
--     makes it a decider, SPEC Events rule 1: a superuser counts only through a role), and
--   * whose queue shows the employee (absences.view_absence_queue on the same perimeter:
--     an account that can decide but cannot read the queue is not a decider).
-- attached = one of its restricted role attributions granting p_decide_permission (or an
-- on-call period active now, which extends such a role) covers an establishment of the
-- employee: main workplace, secondary workplace, or a team of the day (p_on or today).
-- The others (a role without establishments, e.g. an Admin of the whole association, or an
-- explicit permission, which carries no establishment restriction) are unattached.
-- Two statements (docs/architecture.md, Performance notes): the employee's establishments,
-- then the candidates with both perimeters tested on the employee, set-wise: the scope rule of
-- app_hidden.permission_scopes read for these few accounts and this one employee
-- (test/db/60-perimeter-shortcuts.sql checks it against app_hidden.may's definition).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                               p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_exists boolean;
  -- The employee's establishments today (what app_hidden.may(decider, permission, employee,
  -- now) reads), and on either day (p_on or today: what attaches a decider).
  v_now_establishments int[];
  v_establishments int[];
  -- The permissions an on-call period extends (SPEC Permissions rule 9, as in permission_scopes).
  v_on_call_extends boolean := p_decide_permission in ('absences.view_absence_queue', 'absences.decide_absence',
                                                       'planning.decide_shift_change');
begin
  if p_employee_id is null then
    return;
  end if;
  select exists (select 1 from app_public.employees e where e.id = p_employee_id),
         coalesce(array_agg(x.establishment_id) filter (where x.today), '{}'),
         coalesce(array_agg(x.establishment_id), '{}')
    into v_exists, v_now_establishments, v_establishments
  from (select y.establishment_id, bool_or(y.today) as today
        from (select e.main_establishment_id as establishment_id, true as today
              from app_public.employees e
              where e.id = p_employee_id and e.main_establishment_id is not null
              union all
              select ses.establishment_id, true
              from app_public.employee_secondary_establishments ses
              where ses.employee_id = p_employee_id
              union all
              select te.establishment_id, app_hidden.date_in(v_today, ta.start_date, ta.end_date)
              from app_public.team_assignments ta
              join app_public.team_establishments te on te.team_id = ta.team_id
              where ta.employee_id = p_employee_id
                and (app_hidden.date_in(v_today, ta.start_date, ta.end_date)
                     or app_hidden.date_in(coalesce(p_on, v_today), ta.start_date, ta.end_date))) y
        group by y.establishment_id) x;
  return query
  with candidates as (
    -- The accounts whose decision perimeter can cover the employee, found from the
    -- attributions of the roles granting the decision (and explicit permissions), not by
    -- testing every account: an attribution of the whole association (or of a superuser), or
    -- one on an establishment of the employee, or extended to one by an on-call period. The
    -- perimeter checks below run on them only (a handful, whatever the number of managers).
    select ra.account_id
    from app_public.role_permissions rp
    join app_public.roles r on r.id = rp.role_id
    -- per granting role, its attributions through the role index: the Salarié attribution of
    -- every employee is never read
    cross join lateral (select x.id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x
                        where x.role_id = rp.role_id offset 0) ra
    where rp.permission_code = p_decide_permission
      and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
      and (not r.opens_manager_workspace
           or not exists (select 1 from app_public.role_attribution_establishments rae
                          where rae.attribution_id = ra.id)
           or exists (select 1 from app_public.role_attribution_establishments rae
                      where rae.attribution_id = ra.id
                        and rae.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.on_call_periods op
                      join app_public.on_call_period_establishments ope on ope.period_id = op.id
                      where op.account_id = ra.account_id and op.start_at <= v_at and v_at < op.end_at
                        and ope.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.accounts x where x.id = ra.account_id and x.is_superuser))
    union
    select ap.account_id
    from app_public.account_permissions ap
    where ap.permission_code = p_decide_permission
      and not (select x.is_superuser from app_public.accounts x where x.id = ap.account_id)
  ),
  deciders as (
    -- Active, never the author; one primary-key lookup per candidate.
    select a.id, a.is_superuser
    from candidates c
    cross join lateral (select a.id, a.is_active, a.is_superuser from app_public.accounts a
                        where a.id = c.account_id offset 0) a
    where a.is_active and c.account_id is distinct from p_author_account_id
  ),
  grants as (
    -- Per decider, its role attributions active today granting the decision (d_) or the queue
    -- (q_), read as permission_scopes does: "open" (a role outside the manager workspace, or
    -- without establishments) covers the whole association; a restricted one covers its
    -- establishments, today's of the employee (here) or those of either day (attached).
    select ra.account_id,
           bool_or(rp.permission_code = p_decide_permission) as d_granted,
           bool_or(rp.permission_code = p_decide_permission
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as d_open,
           bool_or(rp.permission_code = p_decide_permission
                   and rae.establishment_id = any (v_now_establishments)) as d_here,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id is not null) as d_restricted,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id = any (v_establishments)) as d_attached,
           bool_or(rp.permission_code = 'absences.view_absence_queue') as q_granted,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as q_open,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and rae.establishment_id = any (v_now_establishments)) as q_here
    from deciders d
    -- its attributions through the account index (offset 0: whatever the estimates)
    cross join lateral (select x.id, x.role_id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x where x.account_id = d.id offset 0) ra
    join app_public.role_permissions rp on rp.role_id = ra.role_id
                                       and rp.permission_code in (p_decide_permission, 'absences.view_absence_queue')
    join app_public.roles r on r.id = ra.role_id
    -- its establishments through the primary key (offset 0: not a scan of every attribution's)
    left join lateral (select x.establishment_id from app_public.role_attribution_establishments x
                       where x.attribution_id = ra.id offset 0) rae on true
    where app_hidden.date_in(v_today, ra.start_date, ra.end_date)
    group by ra.account_id
  ),
  scoped as (
    select d.id, g.*,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = p_decide_permission
                                     offset 0) as d_explicit,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = 'absences.view_absence_queue'
                                     offset 0) as q_explicit,
           oc.on_call_now, oc.on_call_either
    from deciders d
    left join grants g on g.account_id = d.id
    -- Its on-call periods active now, on the employee's establishments.
    cross join lateral (select coalesce(bool_or(ope.establishment_id = any (v_now_establishments)), false) as on_call_now,
                               coalesce(bool_or(ope.establishment_id = any (v_establishments)), false) as on_call_either
                        from app_public.on_call_periods op
                        join app_public.on_call_period_establishments ope on ope.period_id = op.id
                        where op.account_id = d.id and op.start_at <= v_at and v_at < op.end_at) oc
  )
  select s.id,
         coalesce(s.d_attached, false) or (coalesce(s.d_restricted, false) and s.on_call_either)
  from scoped s
  where ((s.d_explicit or coalesce(s.d_open, false)) and v_exists
         or coalesce(s.d_here, false)
         or (coalesce(s.d_granted, false) and v_on_call_extends and s.on_call_now))
    and ((s.q_explicit or coalesce(s.q_open, false)) and v_exists
         or coalesce(s.q_here, false)
         or (coalesce(s.q_granted, false) and s.on_call_now));
end;
$$;

-- The accounts to notify of a filing: the attached deciders, else the unattached ones.
create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    with candidates as (
      select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
    )
    select c.account_id from candidates c
    where c.attached = exists (select 1 from candidates x where x.attached)
    order by c.account_id;
end;
$$;

-- Who hears of a filing nobody can decide: every Admin, else RH n1 and RH n2, else the
-- superusers (the author is added by notify_filing). Active accounts, roles active today.
create or replace function app_private.orphan_filing_recipients() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
begin
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name = 'Admin' and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name in ('RH n1', 'RH n2') and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query select a.id from app_public.accounts a where a.is_active and a.is_superuser;
end;
$$;

-- The cause written in a "sans valideur" notification.
create or replace function app_private.orphan_filing_cause(p_employee_id int, p_on date, p_decide_permission text,
                                                p_author_account_id int)
returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_author_account_id is not null
         and exists (select 1 from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, null) c
                     where c.account_id = p_author_account_id)
    then 'Cause : l''auteur de la demande est le seul valideur possible, et personne ne décide sa propre demande.'
    else format('Cause : aucun compte actif ne peut à la fois voir et décider les demandes concernant %s (%s).',
                coalesce(app_hidden.employee_name(p_employee_id), 'ce salarié'),
                coalesce('établissements : ' || (select string_agg(e.name, ', ' order by e.name)
                                                  from app_public.establishments e
                                                  where e.id in (select app_hidden.employee_establishments(p_employee_id, p_on))),
                         'rattaché à aucun établissement'))
  end;
$$;

-- Notifies a filing and returns has_recipient. With deciders: each receives
-- (p_title, p_body). Without: the author and the fallback recipients (every Admin, else
-- RH n1 and n2, else the superusers) receive (p_orphan_title, p_orphan_body followed by the
-- cause), and the caller learns false. Any failure aborts the caller's write.
create or replace function app_private.notify_filing(p_employee_id int, p_on date, p_decide_permission text,
                                          p_author_account_id int, p_title text, p_body text,
                                          p_orphan_title text, p_orphan_body text,
                                          p_model text, p_target_id bigint)
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_recipient int;
  v_body text;
begin
  if app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                     p_author_account_id)),
                             p_title, p_body, 'info', p_model, p_target_id) > 0 then
    return true;
  end if;
  v_body := concat_ws(E'\n', nullif(btrim(p_orphan_body), ''),
                      app_private.orphan_filing_cause(p_employee_id, p_on, p_decide_permission, p_author_account_id));
  for v_recipient in
    select r from (select p_author_account_id as r union select app_private.orphan_filing_recipients()) x
    where r is not null
    order by r
  loop
    perform app_private.notify(v_recipient, p_orphan_title, v_body, 'warning', p_model, p_target_id);
  end loop;
  return false;
end;
$$;

-- Notifies every decider whose queue shows the employee (same routing), e.g. a cancellation
-- request. Returns the number of recipients.
create or replace function app_private.notify_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                            p_author_account_id int, p_title text, p_body text,
                                            p_model text, p_target_id bigint)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                         p_author_account_id)),
                                 p_title, p_body, 'info', p_model, p_target_id);
end;
$$;

-- ---------------------------------------------------------------------------------------
-- API: GET /api/notifications/ and POST /api/notifications/<id>/read/

create or replace function app_hidden.notification_json(p_notification app_public.notifications) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', p_notification.id,
    'title', p_notification.title,
    'body', p_notification.body,
    'level', p_notification.level,
    'created_at', p_notification.created_at,
    'read_at', p_notification.read_at,
    'kind', p_notification.kind,
    'path', p_notification.path);
$$;

-- The caller's notifications, newest first; p_unread true = unread only, false = read only.
create or replace function app_public.notifications_list(p_unread boolean default null, p_page int default 1,
                                              p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with mine as (
    select n.* from app_public.notifications n
    where n.account_id = app_hidden.current_account_id()   -- RLS says the same (select_own)
      and (p_unread is null or (n.read_at is null) = p_unread)
  )
  select jsonb_build_object(
    'count', (select count(*) from mine),
    'results', coalesce((
      select jsonb_agg(app_hidden.notification_json(p) order by p.created_at desc, p.id desc)
      from (select * from mine order by created_at desc, id desc
            limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb));
$$;
comment on function app_public.notifications_list(boolean, integer, integer) is
'SPEC Notifications: one page of the caller''s in-app notifications, newest first; p_unread true keeps
the unread ones, false the read ones.';

-- Marks one of the caller's notifications read (idempotent: the first reading time stays)
-- and returns it. Another account's notification is not found.
create or replace function app_public.notification_mark_read(p_id bigint) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.notifications;
begin
  update app_public.notifications n set read_at = coalesce(n.read_at, app_hidden.now())
  where n.id = p_id and n.account_id = app_hidden.current_account_id()
  returning n.* into v;
  if not found then
    perform app_hidden.not_found('Notification introuvable.', 'WN601');
  end if;
  return app_hidden.notification_json(v);
end;
$$;
comment on function app_public.notification_mark_read(bigint) is
'SPEC Notifications: marks one of the caller''s notifications read (idempotent: the first reading time
stays) and returns it; another account''s notification is not found.';

-- ---------------------------------------------------------------------------------------
-- E-mail outbox. Rows are inserted by the business transactions (password reset,
-- invitations); the worker task drain_email_outbox delivers them.

-- Enqueues the drain job in the same transaction as the insert, so that mails leave
-- promptly; skipped silently when graphile-worker's schema is not installed (its
-- migrations run when the worker starts, and the worker drains the outbox at start).
create or replace function app_private.tg_email_outbox__enqueue() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if to_regnamespace('graphile_worker') is not null then
    perform graphile_worker.add_job('drain_email_outbox', json_build_object(), job_key => 'drain_email_outbox');
  end if;
  return null;
end;
$$;
create or replace trigger _900_enqueue after insert on app_private.email_outbox
  for each statement execute function app_private.tg_email_outbox__enqueue();

-- The next mail to deliver after p_after_id (id order), locked for this transaction so that
-- two drains never send the same mail; null when none is left. Mails that exhausted
-- email_max_attempts stay in the outbox, visible to staff, and are not retried.
-- (body_html and headers: the HTML part and the List-Unsubscribe headers of a notification's.)
drop function if exists app_private.email_outbox_next(bigint) cascade;
create or replace function app_private.email_outbox_next(p_after_id bigint default 0)
returns table (id bigint, to_address text, subject text, body_text text, body_html text, headers jsonb, attempts int)
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  select o.id, o.to_address, o.subject, o.body_text, o.body_html, o.headers, o.attempts
  from app_private.email_outbox o
  where o.sent_at is null and o.id > coalesce(p_after_id, 0)
    and o.attempts < coalesce((app_hidden.setting('email_max_attempts') #>> '{}')::int, 10)
  order by o.id
  limit 1
  for update skip locked;
$$;

create or replace function app_private.email_outbox_sent(p_id bigint) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set sent_at = app_hidden.now(), attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = null
  where id = p_id and sent_at is null;
$$;

create or replace function app_private.email_outbox_failed(p_id bigint, p_error text) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = left(coalesce(p_error, 'erreur inconnue'), 2000)
  where id = p_id and sent_at is null;
$$;

-- Number of mails waiting (for the worker's log when SMTP is not configured).
create or replace function app_private.email_outbox_pending_count() returns bigint
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select count(*) from app_private.email_outbox o where o.sent_at is null;
$$;

-- Staff read the outbox (mails stay there without SMTP settings). The body carries
-- single-use password links: only superusers see it, so that staff status alone never
-- gives a way into another account.

create or replace function app_public.email_outbox_list(p_status text default null, p_page int default 1,
                                             p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_superuser boolean := exists (select 1 from app_public.accounts a
                                 where a.id = app_hidden.current_account_id() and a.is_superuser);
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('La boîte d''envoi des e-mails est réservée aux comptes du personnel d''administration.', 'WF602');
  end if;
  if p_status is not null and p_status not in ('pending', 'sent', 'failed') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, sent, failed.', 'WV602');
  end if;
  return (
    with mails as (
      select o.* from app_private.email_outbox o
      where p_status is null
         or (p_status = 'pending' and o.sent_at is null)
         or (p_status = 'sent' and o.sent_at is not null)
         or (p_status = 'failed' and o.sent_at is null and o.last_error is not null)
    )
    select jsonb_build_object(
      'count', (select count(*) from mails),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'id', m.id, 'kind', m.kind, 'to_address', m.to_address, 'subject', m.subject,
                 'account', m.account_id, 'created_at', m.created_at, 'sent_at', m.sent_at,
                 'attempts', m.attempts, 'last_attempt_at', m.last_attempt_at, 'last_error', m.last_error)
               || case when v_superuser then jsonb_build_object('body_text', m.body_text) else '{}'::jsonb end
               order by m.created_at desc, m.id desc)
        from (select * from mails order by created_at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) m), '[]'::jsonb)));
end;
$$;
comment on function app_public.email_outbox_list(text, integer, integer) is
'SPEC Authentication rule 4 (invitations and reset links), back-office: for staff accounts (else 403),
one page of the outgoing mails newest first, filtered by status pending, sent or failed; the body only
for superusers, as it carries single-use password links.';
--! EndIncluded notifications/functions.sql
--! Included notifications/emails.sql
-- E-mail notifications (issue 28). Every in-app notification also goes by e-mail to its
-- recipient when the account is active and has an address (the professional e-mail of its
-- employee record), through the outbox (app_private.email_outbox, delivered by the worker's
-- drain_email_outbox; printed on the console in the embedded mode):
--   * at once: the transaction that writes the notification only routes it and enqueues the
--     worker's drain_email_outbox job; the job writes the e-mail into the outbox
--     (app_private.queue_notification_emails) and sends it, seconds later: an e-mail never
--     slows, blocks or rolls back the request, and a failed send is retried by the worker;
--   * in a daily digest at the hour the account chose (send_notification_digests, hourly);
--   * never;
-- per kind: own (my requests and my account), decide (requests of others), planning (alerts).
-- An e-mail never says more than its reader may read in the application, and less: the title
-- of the notification (fixed words), the employee and the dates of the request, and the link
-- to the item. Never the type of an absence (it can be a health reason), a comment, a reason
-- or a document: those are read in the application, after the login.

-- ---------------------------------------------------------------------------------------
-- Routing: the kind and the address of a notification for its recipient.

-- The employee a notification's item is about (absence, day-change request), or null.
create or replace function app_private.notification_target_employee(p_model text, p_target_id bigint) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_target_id is null or p_target_id > 2147483647 or p_target_id < 1 then
    return null;
  end if;
  return case p_model
    when 'absence' then (select a.employee_id from app_public.absences a where a.id = p_target_id::int)
    when 'shift_change_request' then (select r.employee_id from app_public.shift_change_requests r where r.id = p_target_id::int)
    when 'employee' then p_target_id::int
  end;
end;
$$;

-- Is the recipient the employee the item is about? (never null)
create or replace function app_private.notification_about_recipient(p_account_id int, p_model text, p_target_id bigint)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select a.employee_id = app_private.notification_target_employee(p_model, p_target_id)
                   from app_public.accounts a where a.id = p_account_id), false);
end;
$$;

-- own: about the recipient's own request or account (p_own: the recipient is the employee of
-- the item); decide: a request of somebody else (to decide, or a filing nobody can decide, or
-- HR's list of missing documents); planning: an alert of the planning (an event overlapping an
-- absence).
create or replace function app_hidden.notification_kind(p_model text, p_title text, p_own boolean) returns text
language sql immutable parallel safe as $$
  select case
    when p_model = 'event' or p_title like 'Conflit %' then 'planning'
    when p_model in ('absence', 'shift_change_request') then case when p_own then 'own' else 'decide' end
    when p_model is null and p_title = 'Justificatifs manquants' then 'decide'
    else 'own'
  end;
$$;

-- The address of the item in the web application for its recipient (web/src/lib/paths.ts:
-- myAbsence, queueAbsence, myDayChange, queueDayChange, teamPlanning, account), or null (the
-- notification itself is all there is: the e-mail links to /notifications).
create or replace function app_hidden.notification_path(p_model text, p_target_id bigint, p_own boolean) returns text
language sql immutable parallel safe as $$
  select case
    when p_model = 'event' then '/equipe'
    when p_target_id is null then null
    when p_model = 'absence' then case when p_own then '/demandes/absences/' else '/file/absences/' end || p_target_id
    when p_model = 'shift_change_request' then case when p_own then '/demandes/journees/' else '/file/journees/' end || p_target_id
    when p_model = 'employee' and p_own then '/compte'
  end;
$$;

-- What the e-mail of a notification of a kind is: immediate, digest, or none (closed account,
-- no address, or the kind set to never; no preferences row: immediate).
create or replace function app_hidden.notification_email_mode(p_active boolean, p_address text, p_kind text,
                                                   p_preferences app_private.notification_preferences)
returns text
language sql immutable parallel safe as $$
  select case when p_active is not true or p_address is null or x.mode = 'never' then 'none' else x.mode end
  from (select coalesce(case p_kind when 'own' then (p_preferences).own when 'decide' then (p_preferences).decide
                                    else (p_preferences).planning end, 'immediate') as mode) x;
$$;

-- The same for an account now (the worker checks again before writing an e-mail).
create or replace function app_private.notification_email_mode(p_account_id int, p_kind text) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_active boolean;
  v_address text;
  v_preferences app_private.notification_preferences;
begin
  select a.is_active, e.professional_email into v_active, v_address
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = p_account_id;
  select * into v_preferences from app_private.notification_preferences p where p.account_id = p_account_id;
  return app_hidden.notification_email_mode(v_active, v_address, p_kind, v_preferences);
end;
$$;

-- Before each new notification: its kind, its address and its e-mail, from two reads (the
-- recipient with its address and preferences; the employee of the item).
create or replace function app_private.tg_notifications__route() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_active boolean;
  v_address text;
  v_preferences app_private.notification_preferences;
  v_own boolean;
begin
  select a.employee_id, a.is_active, e.professional_email into v_employee, v_active, v_address
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = new.account_id;
  select * into v_preferences from app_private.notification_preferences p where p.account_id = new.account_id;
  v_own := coalesce(v_employee = app_private.notification_target_employee(new.model, new.target_id), false);
  new.kind := app_hidden.notification_kind(new.model, new.title, v_own);
  new.path := app_hidden.notification_path(new.model, new.target_id, v_own);
  new.email := app_hidden.notification_email_mode(v_active, v_address, new.kind, v_preferences);
  new.emailed_at := null;
  return new;
end;
$$;
create or replace trigger _100_route before insert on app_public.notifications
  for each row execute function app_private.tg_notifications__route();

-- ---------------------------------------------------------------------------------------
-- Composition. Plain text and HTML, French, with the link and List-Unsubscribe.

create or replace function app_hidden.html_escape(p_text text) returns text
language sql immutable parallel safe as $$
  select replace(replace(replace(replace(replace(p_text, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
$$;

create or replace function app_private.public_url() returns text
language sql stable as $$
  select rtrim(coalesce(nullif(current_setting('app.public_url', true), ''), 'http://localhost:8000'), '/');
$$;

-- What an e-mail may say of the item to its reader, besides the title: the employee and the
-- dates; never the type of an absence, a comment, a reason or a document. Said only when the
-- reader is that employee, or reads that employee's requests now (absences.view_absence_queue
-- on a perimeter covering them: a digest is written hours after its notifications, and a
-- perimeter may have changed since). Null when there is nothing more to say.
create or replace function app_private.notification_email_line(p_account_id int, p_model text, p_target_id bigint)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := app_private.notification_target_employee(p_model, p_target_id);
begin
  if v_employee is null or p_model not in ('absence', 'shift_change_request')
     or (app_private.notification_about_recipient(p_account_id, p_model, p_target_id)
         or app_hidden.may(p_account_id, 'absences.view_absence_queue', v_employee, app_hidden.now())) is not true then
    return null;
  end if;
  if p_model = 'absence' then
    return (select format('%s — absence %s', app_hidden.employee_name(a.employee_id),
                          app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                                       a.start_time, a.end_time))
            from app_public.absences a where a.id = p_target_id::int);
  end if;
  return (select format('%s — journée du %s', app_hidden.employee_name(r.employee_id), app_hidden.fr_date(r.date))
          from app_public.shift_change_requests r where r.id = p_target_id::int);
end;
$$;

create or replace function app_hidden.notification_kind_label(p_kind text) returns text
language sql immutable parallel safe as $$
  select case p_kind when 'own' then 'Mes demandes' when 'decide' then 'Demandes à décider' when 'planning' then 'Planning' end;
$$;

-- The unsubscribe secret of an account (its preferences row is created with the defaults
-- when it has none).
create or replace function app_private.notification_unsubscribe_token(p_account_id int) returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  select p.unsubscribe_token into v_token from app_private.notification_preferences p where p.account_id = p_account_id;
  if v_token is null then
    insert into app_private.notification_preferences (account_id) values (p_account_id)
    on conflict (account_id) do nothing;
    select p.unsubscribe_token into v_token from app_private.notification_preferences p where p.account_id = p_account_id;
  end if;
  return v_token;
end;
$$;

-- One e-mail for an account: items [{title, line, path}] (one: a notification at once;
-- several: a digest), as {subject, text, html, headers}. kinds: the kinds it carries, which
-- its List-Unsubscribe address turns off.
create or replace function app_private.notification_email_compose(p_account_id int, p_subject text, p_intro text,
                                                       p_items jsonb, p_kinds text[])
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_base text := app_private.public_url();
  v_name text := coalesce(app_hidden.account_display_name(p_account_id), '');
  v_unsubscribe text := format('%s/api/notifications/unsubscribe/?token=%s&kinds=%s', v_base,
                               app_private.notification_unsubscribe_token(p_account_id), array_to_string(p_kinds, ','));
  v_settings text := v_base || '/compte';
  v_kinds text := (select string_agg('« ' || app_hidden.notification_kind_label(k) || ' »', ', ' order by k) from unnest(p_kinds) k);
  v_text text;
  v_html text;
begin
  v_text := concat_ws(E'\n',
    format('Bonjour %s,', v_name), '', p_intro, '',
    (select string_agg(concat_ws(E'\n', i ->> 'title', i ->> 'line',
                                 'Ouvrir : ' || v_base || coalesce(i ->> 'path', '/notifications')), E'\n\n' order by o)
     from jsonb_array_elements(p_items) with ordinality x(i, o)),
    '',
    'Le détail (type d''absence, motif, commentaires, justificatifs) ne part jamais par e-mail : il se lit dans l''application, après connexion.',
    '',
    '-- ',
    format('Vous recevez cet e-mail pour : %s. Tout de suite, un résumé quotidien ou jamais : choisissez dans « Mon compte » (%s),', v_kinds, v_settings),
    'ou désabonnez-vous en un clic avec le lien « Se désabonner » de votre messagerie.');
  v_html := concat(
    '<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>', app_hidden.html_escape(p_subject), '</title></head>',
    '<body style="font-family:sans-serif;line-height:1.5;color:#1a1a1a;max-width:40em">',
    '<p>', app_hidden.html_escape(format('Bonjour %s,', v_name)), '</p>',
    '<p>', app_hidden.html_escape(p_intro), '</p>',
    (select string_agg(concat('<div style="margin:1em 0;padding:.75em;border-left:4px solid #1d4ed8;background:#f3f4f6">',
                              '<p style="margin:0;font-weight:bold">', app_hidden.html_escape(i ->> 'title'), '</p>',
                              case when i ->> 'line' is not null then '<p style="margin:.25em 0">' || app_hidden.html_escape(i ->> 'line') || '</p>' else '' end,
                              '<p style="margin:.25em 0"><a href="', app_hidden.html_escape(v_base || coalesce(i ->> 'path', '/notifications')),
                              '">Ouvrir dans l’application</a></p></div>'), '' order by o)
     from jsonb_array_elements(p_items) with ordinality x(i, o)),
    '<p>Le détail (type d’absence, motif, commentaires, justificatifs) ne part jamais par e-mail : il se lit dans l’application, après connexion.</p>',
    '<hr><p style="font-size:.9em;color:#4b5563">', app_hidden.html_escape(format('Vous recevez cet e-mail pour : %s.', v_kinds)),
    ' Tout de suite, un résumé quotidien ou jamais : <a href="', app_hidden.html_escape(v_settings), '">choisissez dans « Mon compte »</a>,',
    ' ou désabonnez-vous en un clic avec le lien « Se désabonner » de votre messagerie.</p></body></html>');
  return jsonb_build_object(
    'subject', p_subject, 'text', v_text, 'html', v_html,
    'headers', jsonb_build_object('List-Unsubscribe', '<' || v_unsubscribe || '>',
                                  'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'));
end;
$$;

-- The e-mail of one notification (sent at once).
create or replace function app_private.notification_email(p_notification app_public.notifications) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notification_email_compose(
    p_notification.account_id, p_notification.title,
    'Vous avez une nouvelle notification dans l''application de planning.',
    jsonb_build_array(jsonb_build_object('title', p_notification.title,
                                         'line', app_private.notification_email_line(p_notification.account_id, p_notification.model,
                                                                                     p_notification.target_id),
                                         'path', p_notification.path)),
    array[p_notification.kind]);
end;
$$;

-- After the notifications of a statement: when one goes by e-mail at once, the worker's
-- drain_email_outbox job is enqueued in the same transaction (one job, by its key; skipped
-- silently when graphile-worker's schema is not installed: the worker drains at start).
create or replace function app_private.tg_notifications__email() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if to_regnamespace('graphile_worker') is not null and exists (select 1 from new_rows r where r.email = 'immediate') then
    perform graphile_worker.add_job('drain_email_outbox', json_build_object(), job_key => 'drain_email_outbox');
  end if;
  return null;
end;
$$;
create or replace trigger _800_email after insert on app_public.notifications
  referencing new table as new_rows
  for each statement execute function app_private.tg_notifications__email();

-- The worker's first step of drain_email_outbox (and npm run job -- drain_email_outbox): the
-- e-mails of the notifications sent at once that are not in the outbox yet, oldest first (at
-- most p_limit), composed now (what the reader may read now). One that cannot be written (an
-- address the outbox refuses, ...) is given up with a warning, and its notification says none
-- went. Returns how many were queued.
create or replace function app_private.queue_notification_emails(p_limit int default 500) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  n app_public.notifications;
  m jsonb;
  v_count int := 0;
begin
  for n in
    select * from app_public.notifications x
    where x.email = 'immediate' and x.emailed_at is null
    order by x.id
    limit greatest(coalesce(p_limit, 500), 1)
    for update skip locked
  loop
    -- Closed since, or without address since: no e-mail.
    if app_private.notification_email_mode(n.account_id, n.kind) = 'none' then
      update app_public.notifications x set email = 'none' where x.id = n.id;
      continue;
    end if;
    begin
      m := app_private.notification_email(n);
      insert into app_private.email_outbox (kind, to_address, subject, body_text, body_html, headers, account_id)
      values ('notification', app_private.account_email(n.account_id), m ->> 'subject', m ->> 'text', m ->> 'html',
              m -> 'headers', n.account_id);
      update app_public.notifications x set emailed_at = app_hidden.now() where x.id = n.id;
      v_count := v_count + 1;
    exception when others then
      raise warning 'notification %: its e-mail was not queued (%)', n.id, sqlerrm;
      update app_public.notifications x set email = 'none' where x.id = n.id;
    end;
  end loop;
  return v_count;
end;
$$;

-- ---------------------------------------------------------------------------------------
-- The daily digest (worker task send_notification_digests, every hour; npm run job).

-- The last digest instant of an hour at or before p_now (business time zone).
create or replace function app_hidden.last_digest_instant(p_now timestamptz, p_hour int) returns timestamptz
language sql stable as $$
  select case when x.today <= p_now then x.today
              else ((((p_now at time zone app_hidden.business_timezone())::date - 1) + make_time(p_hour, 0, 0))
                    at time zone app_hidden.business_timezone()) end
  from (select (((p_now at time zone app_hidden.business_timezone())::date + make_time(p_hour, 0, 0))
                at time zone app_hidden.business_timezone()) as today) x;
$$;

-- Sends the digests due at p_now: an account whose digest hour came since its last digest
-- (or since it chose the digest) gets one e-mail gathering its notifications waiting for the
-- digest, oldest first; each is marked e-mailed, so nothing is sent twice. Waiting
-- notifications of a kind now set to never, or of an account now closed or without an
-- address, are dropped from the digest. Returns the number of digests queued.
create or replace function app_private.send_notification_digests(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.notification_preferences;
  v_address text;
  v_items jsonb;
  v_ids bigint[];
  v_kinds text[];
  v_mail jsonb;
  v_count int := 0;
begin
  if p_now is null then
    raise exception 'send_notification_digests: the time is required';
  end if;
  for p in
    select x.* from app_private.notification_preferences x
    where exists (select 1 from app_public.notifications n
                  where n.account_id = x.account_id and n.email = 'digest' and n.emailed_at is null)
    order by x.account_id
    for update of x
  loop
    if app_hidden.last_digest_instant(p_now, p.digest_hour) <= p.digest_since then
      continue;
    end if;
    v_address := case when exists (select 1 from app_public.accounts a where a.id = p.account_id and a.is_active)
                      then app_private.account_email(p.account_id) end;
    update app_public.notifications n set email = 'none'
    where n.account_id = p.account_id and n.email = 'digest' and n.emailed_at is null
      and (v_address is null
           or case n.kind when 'own' then p.own when 'decide' then p.decide else p.planning end = 'never');
    select jsonb_agg(jsonb_build_object('title', n.title,
                                        'line', app_private.notification_email_line(n.account_id, n.model, n.target_id),
                                        'path', n.path) order by n.created_at, n.id),
           array_agg(n.id order by n.created_at, n.id),
           array_agg(distinct n.kind)
      into v_items, v_ids, v_kinds
    from app_public.notifications n
    where n.account_id = p.account_id and n.email = 'digest' and n.emailed_at is null and n.created_at <= p_now;
    if v_ids is null then
      continue;
    end if;
    begin
      v_mail := app_private.notification_email_compose(
        p.account_id,
        format('Résumé de vos notifications : %s nouvelle%s', cardinality(v_ids), case when cardinality(v_ids) > 1 then 's' else '' end),
        format('Résumé du %s : %s notification%s depuis le résumé précédent.',
               app_hidden.fr_date((p_now at time zone app_hidden.business_timezone())::date), cardinality(v_ids),
               case when cardinality(v_ids) > 1 then 's' else '' end),
        v_items, v_kinds);
      insert into app_private.email_outbox (kind, to_address, subject, body_text, body_html, headers, account_id)
      values ('notification_digest', v_address, v_mail ->> 'subject', v_mail ->> 'text', v_mail ->> 'html', v_mail -> 'headers',
              p.account_id);
      update app_public.notifications n set emailed_at = p_now where n.id = any (v_ids);
      update app_private.notification_preferences x set digest_since = p_now where x.account_id = p.account_id;
      v_count := v_count + 1;
    exception when others then
      -- One account's digest that cannot be written stays waiting; the others go.
      raise warning 'digest of account %: not queued (%)', p.account_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- ---------------------------------------------------------------------------------------
-- API: the preferences (« Mon compte »), « Tout marquer comme lu », the unsubscribe address.

create or replace function app_hidden.notification_preferences_json(p_account_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.notification_preferences;
begin
  select * into p from app_private.notification_preferences x where x.account_id = p_account_id;
  return jsonb_build_object(
    'email', app_private.account_email(p_account_id),
    'own', coalesce(p.own, 'immediate'),
    'decide', coalesce(p.decide, 'immediate'),
    'planning', coalesce(p.planning, 'immediate'),
    'digest_hour', coalesce(p.digest_hour, 7));
end;
$$;

create or replace function app_public.notification_preferences_get() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_hidden.current_account_id() is null then
    perform app_hidden.forbidden('Connectez-vous pour lire vos préférences d''e-mail.', 'WF603');
  end if;
  return app_hidden.notification_preferences_json(app_hidden.current_account_id());
end;
$$;
comment on function app_public.notification_preferences_get() is
'Issue 28: the caller''s e-mail preferences per kind of notification (own requests, requests to decide,
planning): immediate, digest (daily, at digest_hour) or never, and the address the e-mails go to (null: none is sent).';

-- Replaces the caller's preferences (every key required); answers them.
create or replace function app_public.notification_preferences_set(p_own text, p_decide text, p_planning text,
                                                        p_digest_hour int)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_errors jsonb := '{}'::jsonb;
  v_modes text[] := array['immediate', 'digest', 'never'];
  v_message text := 'Choisissez immediate (tout de suite), digest (résumé quotidien) ou never (jamais).';
begin
  if v_account is null then
    perform app_hidden.forbidden('Connectez-vous pour choisir vos préférences d''e-mail.', 'WF603');
  end if;
  if p_own is null or p_own <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'own', v_message); end if;
  if p_decide is null or p_decide <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'decide', v_message); end if;
  if p_planning is null or p_planning <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'planning', v_message); end if;
  if p_digest_hour is null or p_digest_hour not between 0 and 23 then
    v_errors := app_hidden.add_error(v_errors, 'digest_hour', 'L''heure du résumé quotidien est une heure entière de 0 à 23.');
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV603');
  end if;
  perform app_private.notification_preferences_save(v_account, p_own, p_decide, p_planning, p_digest_hour);
  return app_hidden.notification_preferences_json(v_account);
end;
$$;
comment on function app_public.notification_preferences_set(text, text, text, integer) is
'Issue 28: replaces the caller''s e-mail preferences (own, decide, planning: immediate, digest or never;
digest_hour 0 to 23, business time zone) and answers them; a bad value is refused under its field.';

-- Saves preferences (owner). A digest counts from the moment its hour or a kind in digest was
-- chosen: the first digest comes at the next digest hour, never at once.
create or replace function app_private.notification_preferences_save(p_account_id int, p_own text, p_decide text,
                                                          p_planning text, p_digest_hour int)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  insert into app_private.notification_preferences as p (account_id, own, decide, planning, digest_hour, digest_since, updated_at)
  values (p_account_id, p_own, p_decide, p_planning, p_digest_hour, app_hidden.now(), app_hidden.now())
  on conflict (account_id) do update set
    own = excluded.own, decide = excluded.decide, planning = excluded.planning, digest_hour = excluded.digest_hour,
    digest_since = case when p.digest_hour <> excluded.digest_hour
                          or (excluded.own = 'digest' and p.own <> 'digest')
                          or (excluded.decide = 'digest' and p.decide <> 'digest')
                          or (excluded.planning = 'digest' and p.planning <> 'digest')
                        then excluded.digest_since else p.digest_since end,
    updated_at = excluded.updated_at;
end;
$$;

-- Marks every unread notification of the caller read; answers how many.
create or replace function app_public.notifications_mark_all_read() returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  update app_public.notifications n set read_at = app_hidden.now()
  where n.account_id = app_hidden.current_account_id() and n.read_at is null;
  get diagnostics v_count = row_count;
  return jsonb_build_object('count', v_count);
end;
$$;
comment on function app_public.notifications_mark_all_read() is
'Issue 28: « Tout marquer comme lu »: marks every unread notification of the caller read and answers how many.';

-- The List-Unsubscribe address of an e-mail (public: its secret is the account's unsubscribe
-- token): the kinds it names go to never. An unknown token or kind is not found.
create or replace function app_private.notification_unsubscribe(p_token text, p_kinds text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_kinds text[] := string_to_array(coalesce(p_kinds, ''), ',');
  v_account int;
begin
  if cardinality(v_kinds) = 0 or exists (select 1 from unnest(v_kinds) k where k not in ('own', 'decide', 'planning')) then
    perform app_hidden.not_found('Adresse de désabonnement introuvable.', 'WN602');
  end if;
  update app_private.notification_preferences p set
    own = case when 'own' = any (v_kinds) then 'never' else p.own end,
    decide = case when 'decide' = any (v_kinds) then 'never' else p.decide end,
    planning = case when 'planning' = any (v_kinds) then 'never' else p.planning end,
    updated_at = app_hidden.now()
  where p.unsubscribe_token = p_token
  returning p.account_id into v_account;
  if v_account is null then
    perform app_hidden.not_found('Adresse de désabonnement introuvable.', 'WN602');
  end if;
  return jsonb_build_object(
    'detail', format('Vous ne recevrez plus d''e-mail pour : %s. Vous pouvez changer d''avis dans « Mon compte ».',
                     (select string_agg('« ' || app_hidden.notification_kind_label(k) || ' »', ', ' order by k)
                      from unnest(v_kinds) k)));
end;
$$;

create or replace function app_public.notification_unsubscribe(p_token text, p_kinds text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notification_unsubscribe(p_token, p_kinds);
end;
$$;
comment on function app_public.notification_unsubscribe(text, text) is
'Issue 28: the List-Unsubscribe address of the notification e-mails (RFC 8058 one-click, public: the
token is the secret): the kinds named go to never; an unknown token or kind is not found.';
--! EndIncluded notifications/emails.sql
--! Included notifications/policies.sql
-- A notification is read, and marked read, by its recipient only. Notifications are
-- created by app_private.notify (owner) only: no insert or delete policy.
alter table app_public.notifications enable row level security;
drop policy if exists select_own on app_public.notifications;
create policy select_own on app_public.notifications for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id()));
drop policy if exists update_own on app_public.notifications;
create policy update_own on app_public.notifications for update to wfm_api
  using (account_id = (select app_hidden.current_account_id()))
  with check (account_id = (select app_hidden.current_account_id()));

-- The outbox is private; staff read it through app_public.email_outbox_list (as wfm_api).
alter table app_private.email_outbox enable row level security;
grant select on app_private.email_outbox to wfm_api;
drop policy if exists select_staff on app_private.email_outbox;
create policy select_staff on app_private.email_outbox for select to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- E-mail preferences: private, read and written through the API functions (owner) only.
alter table app_private.notification_preferences enable row level security;
--! EndIncluded notifications/policies.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int, int), app_private.begin_request_or_fail(int, int, boolean, int, text),
  app_private.login_lookup(text), app_private.set_client_address(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
