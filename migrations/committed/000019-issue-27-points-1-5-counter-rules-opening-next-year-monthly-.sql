--! Previous: sha1:4ef66c3b80c1f7f83ab542d805de2aad8a550df5
--! Hash: sha1:6385769b1cd6720a340e10fb661b426a4cc29e8f
--! Message: Issue 27 points 1-5: counter rules, opening next year, monthly acquisition, carry-over and expiry

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included counters/tables.sql
-- Counters (balances of leave and hours) and their journal.
-- Balances are sums over the journal; the journal is append-only. Every movement locks its
-- counter row first (app_private.counter_lock), so parallel movements serialise.

create table if not exists app_public.counters (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  code text not null references app_public.counter_kinds on delete restrict,
  year smallint not null check (year between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()),
  is_active boolean not null default true,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  unique (employee_id, code, year)
);
create index if not exists counters_code_idx on app_public.counters (code, year);
-- How the counter acquires (issue 27, sql/counters/rules.sql): set by the opening from the
-- counter rule ('opening' or 'monthly'); null for a counter opened by hand or by an import,
-- which the monthly acquisition leaves alone.
alter table app_public.counters add column if not exists acquisition text
  constraint counters_acquisition_check check (acquisition in ('opening', 'monthly'));
create index if not exists counters_year_idx on app_public.counters (year, code) where acquisition is not null;
-- The accepted years are named in sql/core/limits.sql; an older database's CHECK held the numbers.
alter table app_public.counters drop constraint if exists counters_year_check,
  add constraint counters_year_check
    check (year between app_hidden.first_accepted_year() and app_hidden.last_accepted_year());

create table if not exists app_private.counter_movements (
  id bigint generated always as identity primary key,
  counter_id int not null references app_public.counters on delete cascade,
  -- Which column of the balance moves: Acquis, Pris or Planifiés.
  bucket text not null check (bucket in ('acquired', 'taken', 'planned')),
  -- Signed: a reservation is +planned, its release -planned, a consumption +taken, ...
  quantity numeric(8,2) not null check (quantity <> 0),
  kind text not null check (kind in ('grant', 'adjustment', 'reservation', 'release', 'consumption',
                                     'restitution', 'start', 'compensation')),
  -- The absence and the transition that caused the movement (no foreign key: a withdrawn
  -- request is erased but its movements stay in the journal).
  absence_id int,
  transition text,
  actor_account_id int,
  comment text,
  created_at timestamptz not null default app_hidden.now()
);
-- Movements of the leave year (issue 27): acquisition (at the opening, or of one month),
-- carry_over (out of the old year, into the new one), expiry. period: the month acquired
-- (its first day), the first day of the year of an opening or a carry-over, the date of an
-- expiry. One such movement per counter, kind and period (the key that makes the jobs
-- exactly-once, even when late, twice or after a crash).
alter table app_private.counter_movements add column if not exists period date;
alter table app_private.counter_movements drop constraint if exists counter_movements_kind_check;
alter table app_private.counter_movements add constraint counter_movements_kind_check
  check (kind in ('grant', 'adjustment', 'reservation', 'release', 'consumption', 'restitution', 'start', 'compensation',
                  'acquisition', 'carry_over', 'expiry'));
create unique index if not exists counter_movements_period_key on app_private.counter_movements (counter_id, kind, period)
  where period is not null;
create index if not exists counter_movements_counter_idx on app_private.counter_movements (counter_id);
create index if not exists counter_movements_absence_idx on app_private.counter_movements (absence_id) where absence_id is not null;

create or replace function app_private.tg_counter_movements__append_only() returns trigger
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WF900', message = 'Le journal des compteurs est en ajout seul : écrivez un mouvement de compensation.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.counter_movements
  for each row execute function app_private.tg_counter_movements__append_only();

create or replace view app_private.counter_balances as
select c.id as counter_id, c.employee_id, c.code, c.year, c.is_active,
       coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2) as acquired,
       coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2) as taken,
       coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2) as planned,
       (coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)
        - coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)
        - coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0))::numeric(8,2) as remaining
from app_public.counters c
left join app_private.counter_movements m on m.counter_id = c.id
group by c.id;

create or replace trigger _100_timestamps before insert or update on app_public.counters
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded counters/tables.sql
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
-- myAbsence, queueAbsence, myDayChange, queueDayChange, teamPlanning, account, counters), or null (the
-- notification itself is all there is: the e-mail links to /notifications).
create or replace function app_hidden.notification_path(p_model text, p_target_id bigint, p_own boolean) returns text
language sql immutable parallel safe as $$
  select case
    when p_model = 'event' then '/equipe'
    when p_target_id is null then null
    when p_model = 'absence' then case when p_own then '/demandes/absences/' else '/file/absences/' end || p_target_id
    when p_model = 'shift_change_request' then case when p_own then '/demandes/journees/' else '/file/journees/' end || p_target_id
    when p_model = 'employee' and p_own then '/compte'
    -- A balance about to expire (issue 27): « Mes compteurs » (paths.counters).
    when p_model = 'counter' then '/compteurs'
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
--! Included counters/functions.sql
-- The counter journal seen from absences (SPEC rule 9, CONTRACT section 7).
--
-- An active absence (pending, validated, cancellation requested) holds, on each counter
-- its type consumes and for each civil year of its period, its share of the count:
--   * in Planifiés (planned) while it is a request, or while it has not started;
--   * in Pris (taken) once it is granted and started (date_start <= today).
-- A pending request that already started stays in Planifiés until it is granted: a refusal
-- or a withdrawal then only releases it, and nothing is ever taken by a request that was
-- not granted. An inactive absence (refused, cancelled, withdrawn) holds nothing.
--
-- app_private.absence_sync_counters moves the journal from what the absence holds to what
-- it must hold, after locking every counter concerned (ordered by id, so parallel requests
-- serialise without deadlock) and checking that no counter it debits more goes below zero.

-- Remaining of a counter (acquired - taken - planned), from the journal.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.counter_remaining(p_counter_id int) returns numeric
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(sum(case when m.bucket = 'acquired' then m.quantity else -m.quantity end), 0)::numeric(8,2)
          from app_private.counter_movements m where m.counter_id = p_counter_id);
end;
$$;

-- The one check of a request on a counter, with its one wording (SPEC Absences, declaration
-- rule 9): the declaration rules (app_private.absence_rule_counters) and the journal
-- (app_private.absence_sync_counters) both ask it. Null when the request passes.
create or replace function app_private.counter_request_error(p_code text, p_year int, p_counter_id int,
                                                             p_counter_unit text, p_type_unit text, p_type_name text,
                                                             p_requested numeric, p_held numeric)
returns text
language plpgsql stable as $$
declare
  v_available numeric;
begin
  if p_counter_unit <> p_type_unit then
    return format('Le compteur %s est tenu en %s alors que le motif « %s » se pose en %s : demande refusée.',
                  p_code, case when p_counter_unit = 'hour' then 'heures' else 'jours' end, p_type_name,
                  case when p_type_unit = 'hour' then 'heures' else 'jours' end);
  end if;
  if p_counter_id is null then
    return format('Aucun compteur %s ouvert pour %s : le motif « %s » ne peut pas être posé sur cette année.',
                  p_code, p_year, p_type_name);
  end if;
  if p_requested is null then
    return null;
  end if;
  v_available := app_private.counter_remaining(p_counter_id) + coalesce(p_held, 0);
  if p_requested > v_available then
    return format('Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.',
                  p_code, p_year, app_hidden.quantity_fr(p_requested, p_counter_unit),
                  app_hidden.quantity_fr(v_available, p_counter_unit));
  end if;
  return null;
end;
$$;
comment on function app_private.counter_request_error(text, integer, integer, text, text, text, numeric, numeric) is
'SPEC Absences, declaration rule 9: the message refusing p_requested on counter p_code of p_year for the
type p_type_name (units that differ, no open counter, or more than its remaining plus p_held, what the
absence already holds on it), or null; p_requested null checks the unit and the opening only.';

-- What an absence must hold now: one line per (counter, bucket).
-- p_plan: the "plan" of app_private.absence_evaluate for this very row, evaluated without any
-- error in the same transaction (the creation): its lines are open counters in the type's unit,
-- in the order of app_private.absence_counter_plan, so they are read from it instead of counting
-- the period again; null: counted here.
drop function if exists app_private.absence_counter_target(app_public.absences, date);
create or replace function app_private.absence_counter_target(p_absence app_public.absences, p_today date,
                                                              p_plan jsonb default null)
returns table (counter_id int, code text, year int, bucket text, quantity numeric, counter_unit text, type_unit text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  if p_absence.id is null or not coalesce(app_hidden.absence_is_active(p_absence.status), false) then
    return;
  end if;
  if p_plan is not null then
    return query
    select (x ->> 'counter_id')::int, x ->> 'code', (x ->> 'year')::int,
           app_hidden.absence_counter_bucket(p_absence.status, p_absence.date_start, p_today),
           (x ->> 'quantity')::numeric, t.unit, t.unit
    from jsonb_array_elements(p_plan) with ordinality l(x, n)
    cross join app_public.absence_types t
    where t.id = p_absence.type_id
    order by l.n;
    return;
  end if;
  return query
  select p.counter_id, p.code, p.year,
         app_hidden.absence_counter_bucket(p_absence.status, p_absence.date_start, p_today),
         p.quantity, p.counter_unit, p.type_unit
  from app_private.absence_counter_plan(row(p_absence.employee_id, p_absence.type_id, p_absence.date_start,
                                            p_absence.date_end, p_absence.start_half, p_absence.end_half,
                                            p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft) p;
end;
$$;

create or replace function app_private.counter_movement(p_counter_id int, p_bucket text, p_quantity numeric, p_kind text,
                                             p_absence_id int, p_transition text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_quantity <> 0 then
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
    values (p_counter_id, p_bucket, p_quantity, p_kind, p_absence_id, p_transition, app_hidden.current_account_id());
  end if;
end;
$$;

/*
 * Brings the journal of one absence to what it must hold (the absence may have been
 * deleted: it then holds nothing). p_transition names the cause in the journal:
 * create, edit, validate, refuse, withdraw, request_cancellation, cancel, start.
 *   edit: the old position is compensated and the new one written, so the balance moves
 *         by the difference and the journal shows both;
 *   otherwise: reservation / release (Planifiés), start + consumption (Planifiés → Pris),
 *         consumption / restitution (Pris).
 * Refuses with 400 under `counters` (nothing written: the transaction aborts) when a
 * counter is missing, its unit does not match, or a debit exceeds its remaining.
 * Returns the effects: [{"counter", "year", "column", "direction", "quantity"}].
 * p_plan: the "plan" of app_private.absence_evaluate for this very row, evaluated without any
 * error in the same transaction (the creation), handed to app_private.absence_counter_target.
 */
drop function if exists app_private.absence_sync_counters(int, text, date) cascade;
create or replace function app_private.absence_sync_counters(p_absence_id int, p_transition text, p_today date default null,
                                                             p_plan jsonb default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := coalesce(p_today, app_hidden.today());
  v_absence app_public.absences;
  v_target jsonb := '[]'::jsonb;
  v_current jsonb;
  v_ids int[];
  v_effects jsonb := '[]'::jsonb;
  v_error text;
  v_moved numeric;
  r record;
begin
  select * into v_absence from app_public.absences a where a.id = p_absence_id;
  for r in select * from app_private.absence_counter_target(v_absence, v_today, p_plan) loop
    if r.counter_unit <> r.type_unit or r.counter_id is null then
      perform app_hidden.invalid('counters', app_private.counter_request_error(
        r.code, r.year, r.counter_id, r.counter_unit, r.type_unit,
        (select t.name from app_public.absence_types t where t.id = v_absence.type_id), null, null), 'WV301');
    end if;
    v_target := v_target || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                               'bucket', r.bucket, 'quantity', r.quantity);
  end loop;
  -- A fresh absence holds nothing yet (its id is new, and the journal is keyed by it).
  if p_transition = 'create' then
    v_current := '[]'::jsonb;
  else
    select coalesce(jsonb_agg(jsonb_build_object('counter_id', n.counter_id, 'code', n.code, 'year', n.year,
                                                 'bucket', n.bucket, 'quantity', n.quantity)), '[]'::jsonb)
      into v_current
    from app_private.absence_counter_nets(array[p_absence_id]) n;
  end if;

  v_ids := array(select distinct (x ->> 'counter_id')::int from jsonb_array_elements(v_target || v_current) x order by 1);
  if cardinality(v_ids) = 0 then
    return v_effects;
  end if;
  -- Serialise movements per counter.
  perform 1 from app_public.counters c where c.id = any (v_ids) order by c.id for update;

  -- Per counter and bucket: target (t) and current (c) positions.
  for r in
    with t as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_target) x
    ), c as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_current) x
    ), per_counter as (
      select k.id as counter_id, k.code, k.year::int as year, kk.unit,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'planned'), 0) as tp,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'taken'), 0) as tt,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'planned'), 0) as cp,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'taken'), 0) as ct
      from app_public.counters k join app_public.counter_kinds kk on kk.code = k.code
      where k.id = any (v_ids)
    )
    select * from per_counter order by counter_id
  loop
    -- Never overdraw: a counter debited more must keep a remaining >= 0.
    if r.tp + r.tt > r.cp + r.ct then
      v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.unit, r.unit, null,
                                                   r.tp + r.tt, r.cp + r.ct);
      if v_error is not null then
        perform app_hidden.invalid('counters', v_error, 'WV301');
      end if;
    end if;

    if p_transition = 'edit' then
      if r.tp <> r.cp then
        perform app_private.counter_movement(r.counter_id, 'planned', -r.cp, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'planned', r.tp, 'reservation', p_absence_id, p_transition);
      end if;
      if r.tt <> r.ct then
        perform app_private.counter_movement(r.counter_id, 'taken', -r.ct, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'taken', r.tt, 'consumption', p_absence_id, p_transition);
      end if;
    else
      -- Planifiés → Pris first (the start of a reservation), then what remains.
      v_moved := least(greatest(r.cp - r.tp, 0), greatest(r.tt - r.ct, 0));
      -- The four lines of app_private.counter_movement in one insert, in the same order (those of
      -- quantity 0 are not written).
      insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
      select r.counter_id, m.bucket, m.quantity, m.kind, p_absence_id, p_transition, app_hidden.current_account_id()
      from (values (1, 'planned', -v_moved, 'start'),
                   (2, 'taken', v_moved, 'consumption'),
                   (3, 'planned', r.tp - r.cp + v_moved,
                    case when r.tp - r.cp + v_moved > 0 then 'reservation' else 'release' end),
                   (4, 'taken', r.tt - r.ct - v_moved,
                    case when r.tt - r.ct - v_moved > 0 then 'consumption' else 'restitution' end)) m(n, bucket, quantity, kind)
      where m.quantity <> 0
      order by m.n;
    end if;

    if r.tp <> r.cp then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'planned',
        'direction', case when r.tp > r.cp then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tp - r.cp)));
    end if;
    if r.tt <> r.ct then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'taken',
        'direction', case when r.tt > r.ct then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tt - r.ct)));
    end if;
  end loop;
  return v_effects;
end;
$$;

-- Effects of a draft compared with what an absence holds (preview): the same shape as the
-- effects of absence_sync_counters, without writing anything. p_plan is the "plan" of
-- app_private.absence_evaluate, p_bucket the column the draft would use.
create or replace function app_private.absence_counter_effects(p_plan jsonb, p_bucket text, p_absence_id int)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with t as (
    select x ->> 'code' as code, (x ->> 'year')::int as year, p_bucket as bucket, (x ->> 'quantity')::numeric as quantity
    from jsonb_array_elements(coalesce(p_plan, '[]'::jsonb)) x
  ), c as (
    select n.code, n.year, n.bucket, n.quantity from app_private.absence_counter_nets(array[p_absence_id]) n
  ), keys as (
    select code, year, bucket from t union select code, year, bucket from c
  ), diff as (
    select k.code, k.year, k.bucket,
           coalesce((select sum(t.quantity) from t where t.code = k.code and t.year = k.year and t.bucket = k.bucket), 0)
           - coalesce((select sum(c.quantity) from c where c.code = k.code and c.year = k.year and c.bucket = k.bucket), 0)
             as delta
    from keys k
  )
  select coalesce(jsonb_agg(jsonb_build_object('counter', d.code, 'year', d.year, 'column', d.bucket,
                                               'direction', case when d.delta > 0 then 'debit' else 'credit' end,
                                               'quantity', app_hidden.fmt_quantity(abs(d.delta)))
                            order by d.code, d.year, d.bucket desc), '[]'::jsonb)
  from diff d where d.delta <> 0;
$$;

-- What granting a cancellation would recredit (cancellation_counter_effects), per absence.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_cancellation_effects(p_absence_ids int[])
returns table (absence_id int, effects jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select n.absence_id,
           jsonb_agg(jsonb_build_object('counter', n.code, 'year', n.year, 'column', n.bucket, 'direction', 'credit',
                                        'quantity', app_hidden.fmt_quantity(n.quantity))
                     order by n.code, n.year, n.bucket desc)
    from app_private.absence_counter_nets(p_absence_ids) n
    where n.quantity > 0
    group by n.absence_id;
end;
$$;

-- Daily job: granted absences that started move from Planifiés to Pris. Idempotent (an
-- absence already moved holds nothing in Planifiés). Returns the number of absences moved;
-- an absence whose counter was closed meanwhile is left as it is (a warning is logged).
create or replace function app_private.consume_started_absences(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_count int := 0;
begin
  for v_id in
    select a.id from app_public.absences a
    where a.status in ('validated', 'cancellation_requested') and a.date_start <= p_today
      and exists (select 1 from app_private.counter_movements m
                  where m.absence_id = a.id and m.bucket = 'planned'
                  group by m.counter_id having sum(m.quantity) > 0)
    order by a.id
  loop
    begin
      perform app_private.absence_sync_counters(v_id, 'start', p_today);
      v_count := v_count + 1;
    exception when sqlstate 'WV301' then
      -- A counter closed since the reservation: this absence stays in Planifiés (its
      -- reservation is visible and released by a cancellation); the others move on.
      raise warning 'consume_started_absences: absence % not moved: %', v_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- Balances of an employee's counters for a year, summed over the journal.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.counter_balances_of(p_employee int, p_year int)
returns table (id int, code text, name text, unit text, year int, is_active boolean,
               acquired numeric, taken numeric, planned numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select c.id, c.code, k.name, k.unit, c.year::int, c.is_active,
           coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2)
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    left join app_private.counter_movements m on m.counter_id = c.id
    where c.employee_id = p_employee and c.year = p_year
    group by c.id, k.name, k.unit, k.position
    order by k.position, c.code;
end;
$$;

-- GET /api/counters/?employee=&year=: the employee reads their own; holders of
-- absences.view_absence_queue read their perimeter; anybody else gets 404.
create or replace function app_public.counters_read(p_employee int default null, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  if v_employee is null
     or not exists (select 1 from app_public.employees e where e.id = v_employee)
     or not (app_hidden.is_current_employee(v_employee)
             or exists (select 1 from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x(id)
                        where x.id = v_employee)) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if v_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('year', format('Année invalide : entre %s et %s.', app_hidden.first_accepted_year(),
                                              app_hidden.last_accepted_year()), 'WV302');
  end if;
  return coalesce((
    select jsonb_object_agg(b.code, jsonb_build_object(
             'id', b.id, 'code', b.code, 'name', b.name, 'unit', b.unit, 'year', b.year, 'is_active', b.is_active,
             'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
             'planned', app_hidden.fmt_quantity(b.planned),
             'remaining', app_hidden.fmt_quantity(b.acquired - b.taken - b.planned),
             'labels', jsonb_build_object('acquired', 'Acquis', 'taken', 'Pris', 'planned', 'Planifiés',
                                          'remaining', 'Restant'))
           -- The counter's year (issue 27, sql/counters/year.sql: defined later in sql/ORDER).
           || app_private.counter_year_facts(b.id, app_hidden.today()))
    from app_private.counter_balances_of(v_employee, v_year) b), '{}'::jsonb);
end;
$$;
comment on function app_public.counters_read(integer, integer) is
'SPEC Counters, GET /api/counters/?employee=&year=: the counters of an employee for a civil year
(default: the caller, this year), keyed by counter code with Acquis, Pris, Planifiés and Restant; the
employee reads their own, holders of absences.view_absence_queue their perimeter, anybody else gets 404.';
--! EndIncluded counters/functions.sql
--! Included counters/rules.sql
-- Counter rules (issue 27 point 1): per establishment and counter code, how much a year's
-- counter acquires, how (all at the opening, or month by month over the acquisition period),
-- prorated or not for a contract starting or ending during the period, and what carries over
-- to the next year (none, all, or up to a ceiling, until a date of the next year after which
-- what is left expires).
--
-- A rule without establishment is the association's default; a rule of an establishment
-- replaces it for the employees whose main workplace it is. No rule for a code (CET, JRS...):
-- its counters are opened, acquired and closed by hand, as before. Written by staff accounts
-- (the back-office), read by staff and by HR (employee.change_employee_record) of their
-- perimeter; every write is audited (model counter_rule).
--
-- Acquisition periods (docs/architecture.md, "The leave year"):
--   * opening: the annual amount is acquired when the counter of year Y opens, prorated on
--     the days of year Y covered by a contract;
--   * monthly: the counter of year Y is what was acquired during the twelve months of Y - 1
--     (paid leave: acquired one year, taken the next), one journal movement per month once
--     the month has ended, the month's part prorated on the days of the month covered by a
--     contract. The parts are the differences of the rounded cumulative amounts (25 a year:
--     2.08, 2.09, 2.08, ...), so twelve full months make exactly the annual amount.

insert into app_private.audit_models (model, label) values
  ('counter_rule', 'Règle de compteur'),
  ('counter_opening', 'Ouverture des compteurs d''une année')
on conflict do nothing;

insert into app_private.settings (key, value, description) values
  ('counters_opening_date', '"01/10"', 'Date (JJ/MM) à partir de laquelle les compteurs de l''année suivante s''ouvrent chaque jour (tâche open_next_year_counters)')
on conflict do nothing;

create table if not exists app_public.counter_rules (
  id int generated always as identity primary key,
  -- Null: the association's default for the code.
  establishment_id int references app_public.establishments on delete cascade,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  -- The amount of a year (days or hours, the unit of the counter); null: no counter is opened.
  annual_amount numeric(6,2) check (annual_amount is null or (annual_amount >= 0 and annual_amount < 1000)),
  -- Day counters of an establishment counting in jours ouvrables (Monday to Saturday); null:
  -- annual_amount whatever the count base.
  annual_amount_ouvrables numeric(6,2) check (annual_amount_ouvrables is null or (annual_amount_ouvrables >= 0 and annual_amount_ouvrables < 1000)),
  acquisition text not null default 'opening' check (acquisition in ('opening', 'monthly')),
  -- Rounding of the cumulative amounts (monthly) and of a prorated amount.
  rounding text not null default 'hundredth' check (rounding in ('hundredth', 'half_up', 'whole_up')),
  prorate boolean not null default true,
  carry_over text not null default 'none' check (carry_over in ('none', 'all', 'ceiling')),
  carry_over_ceiling numeric(6,2) check (carry_over_ceiling is null or (carry_over_ceiling >= 0 and carry_over_ceiling < 1000)),
  -- DD/MM of the next year after which what was carried over and is left expires; null: it
  -- stays for the whole next year.
  carry_over_until text check (carry_over_until is null or carry_over_until ~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint counter_rules_ceiling check ((carry_over = 'ceiling') = (carry_over_ceiling is not null))
);
create unique index if not exists counter_rules_key on app_public.counter_rules (coalesce(establishment_id, 0), counter_code);
create index if not exists counter_rules_establishment_idx on app_public.counter_rules (establishment_id);
create index if not exists counter_rules_code_idx on app_public.counter_rules (counter_code);

create or replace trigger _100_timestamps before insert or update on app_public.counter_rules
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _500_audit after insert or update on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');
create or replace trigger _500_audit_delete before delete on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');

alter table app_public.counter_rules enable row level security;
drop policy if exists select_staff_or_hr on app_public.counter_rules;
create policy select_staff_or_hr on app_public.counter_rules for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_is_staff())
         or ((select app_hidden.current_account_has('employee.change_employee_record'))
             and (establishment_id is null
                  or app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('employee.change_employee_record'))))));
drop policy if exists insert_staff on app_public.counter_rules;
create policy insert_staff on app_public.counter_rules for insert to wfm_api
  with check ((select app_hidden.current_account_is_staff()));
drop policy if exists update_staff on app_public.counter_rules;
create policy update_staff on app_public.counter_rules for update to wfm_api
  using ((select app_hidden.current_account_is_staff())) with check ((select app_hidden.current_account_is_staff()));
drop policy if exists delete_staff on app_public.counter_rules;
create policy delete_staff on app_public.counter_rules for delete to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- Defaults, loaded with the reference data: paid leave 25 jours ouvrés (30 ouvrables) a
-- year acquired month by month, carried over whole until 31 May of the next year; quarterly
-- leave 9 days a year at the opening, not carried over; the others (seniority, RTT,
-- delegation hours) depend on the person: no amount (no counter opened), not carried over.
insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                      rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
select null, x.code, x.amount, x.amount_ouvrables, x.acquisition, 'hundredth', true, x.carry_over, null, x.until
from (values
  ('CP', 25.00, 30.00, 'monthly', 'all', '31/05'),
  ('CT', 9.00, null, 'opening', 'none', null),
  ('ANC', null, null, 'opening', 'none', null),
  ('RTT', null, null, 'opening', 'none', null),
  ('DLG_CSE', null, null, 'opening', 'none', null),
  ('DLG_DS', null, null, 'opening', 'none', null),
  ('DLG_CS', null, null, 'opening', 'none', null)
) as x(code, amount, amount_ouvrables, acquisition, carry_over, until)
where exists (select 1 from app_public.counter_kinds k where k.code = x.code)
  and not exists (select 1 from app_public.counter_rules r where r.establishment_id is null and r.counter_code = x.code);

-- Rounding of an amount as a rule says: to the hundredth (half up), up to the half day, up
-- to the whole unit.
create or replace function app_hidden.counter_rule_round(p_value numeric, p_rounding text) returns numeric
language sql immutable as $$
  select case p_rounding
           when 'half_up' then ceil(p_value * 2) / 2
           when 'whole_up' then ceil(p_value)
           else round(p_value, 2)
         end::numeric(8,2);
$$;

-- The annual amount of a rule for an establishment's count base.
create or replace function app_hidden.counter_rule_amount(p_rule app_public.counter_rules, p_count_base text) returns numeric
language sql immutable as $$
  select case when p_count_base = 'ouvrables' and p_rule.annual_amount_ouvrables is not null
              then p_rule.annual_amount_ouvrables else p_rule.annual_amount end;
$$;

-- The date after which what was carried over from p_year expires (null: no date).
create or replace function app_hidden.counter_carry_over_deadline(p_until text, p_year int) returns date
language sql immutable as $$
  select case when p_until is null then null
              else make_date(p_year + 1, split_part(p_until, '/', 2)::int, split_part(p_until, '/', 1)::int) end;
$$;

-- The rule that applies to an establishment's employees for a code: the establishment's own,
-- else the association's default; none when neither exists. Owner (the jobs and the opening
-- read every rule, whoever asks).
create or replace function app_private.counter_rule_for(p_establishment int, p_code text) returns app_public.counter_rules
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select r.* from app_public.counter_rules r
  where r.counter_code = p_code and (r.establishment_id is null or r.establishment_id = p_establishment)
  order by r.establishment_id nulls last
  limit 1;
$$;

-- The part of a monthly rule for the k-th month (1 to 12) of the acquisition period: the
-- difference of the rounded cumulative amounts, times the share of the month covered by a
-- contract when the rule prorates (rounded to the hundredth).
create or replace function app_hidden.counter_month_part(p_amount numeric, p_rounding text, p_month int,
                                                         p_covered int, p_days int, p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              else round((app_hidden.counter_rule_round(p_amount * p_month / 12, p_rounding)
                          - app_hidden.counter_rule_round(p_amount * (p_month - 1) / 12, p_rounding))
                         * case when p_prorate then p_covered::numeric / p_days else 1 end, 2)
         end::numeric(8,2);
$$;

-- The amount a rule acquiring at the opening gives for a year p_covered days of which (out
-- of p_days) are covered by a contract.
create or replace function app_hidden.counter_opening_part(p_amount numeric, p_rounding text, p_covered int, p_days int,
                                                           p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              when not p_prorate or p_covered >= p_days then p_amount
              else app_hidden.counter_rule_round(p_amount * p_covered / p_days, p_rounding)
         end::numeric(8,2);
$$;

-- Days of [p_from, p_to] covered by a contract of the employee that is not temporary work
-- (an interim worker's leave is the agency's).
create or replace function app_private.contract_days(p_employee int, p_from date, p_to date) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(sum(upper(r) - lower(r)), 0)::int
  from unnest((select range_agg(daterange(c.start_date, c.end_date, '[]'))
               from app_public.contracts c
               join app_public.contract_types t on t.id = c.contract_type_id
               where c.employee_id = p_employee and not t.is_temporary_work
                 and c.start_date <= p_to and (c.end_date is null or c.end_date >= p_from))
              * datemultirange(daterange(p_from, p_to, '[]'))) r;
$$;

-- The field rules of a counter rule, in the order of the form; '{}' when it passes.
create or replace function app_hidden.counter_rule_errors(p_id int, p_establishment int, p_counter_code text,
                                                          p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                          p_acquisition text, p_rounding text, p_prorate boolean,
                                                          p_carry_over text, p_carry_over_ceiling numeric,
                                                          p_carry_over_until text)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_kind app_public.counter_kinds;
  v_amount_message text := 'Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.';
begin
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  select * into v_kind from app_public.counter_kinds k where k.code = p_counter_code;
  if p_counter_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif v_kind.code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif not v_kind.is_consumable then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', format('Le compteur %s n''est pas un compteur de congés ou d''heures consommable : il n''a pas de règle d''acquisition.', p_counter_code));
  elsif exists (select 1 from app_public.counter_rules r
                where coalesce(r.establishment_id, 0) = coalesce(p_establishment, 0) and r.counter_code = p_counter_code
                  and r.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', case when p_establishment is null
      then format('Le compteur %s a déjà une règle par défaut de l''association.', p_counter_code)
      else format('Le compteur %s a déjà une règle pour cet établissement.', p_counter_code) end);
  end if;
  if p_annual_amount is not null and (p_annual_amount < 0 or p_annual_amount >= 1000 or p_annual_amount <> round(p_annual_amount, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_amount', v_amount_message);
  end if;
  if p_annual_amount_ouvrables is not null then
    if p_annual_amount_ouvrables < 0 or p_annual_amount_ouvrables >= 1000 or p_annual_amount_ouvrables <> round(p_annual_amount_ouvrables, 2) then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', v_amount_message);
    elsif v_kind.unit = 'hour' then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Un compteur en heures ne dépend pas de la base de décompte : laissez ce champ vide.');
    elsif p_annual_amount is null then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Indiquez d''abord la quantité annuelle (en jours ouvrés).');
    end if;
  end if;
  if p_acquisition is null or p_acquisition not in ('opening', 'monthly') then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Acquisition à l''ouverture (opening) ou mois par mois (monthly).');
  elsif p_acquisition = 'monthly' and p_annual_amount is null then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Une acquisition mois par mois demande une quantité annuelle.');
  end if;
  if p_rounding is null or p_rounding not in ('hundredth', 'half_up', 'whole_up') then
    v_errors := app_hidden.add_error(v_errors, 'rounding', 'Arrondi au centième (hundredth), au demi supérieur (half_up) ou à l''unité supérieure (whole_up).');
  end if;
  if p_prorate is null then
    v_errors := app_hidden.add_error(v_errors, 'prorate', 'Ce champ est obligatoire.');
  end if;
  if p_carry_over is null or p_carry_over not in ('none', 'all', 'ceiling') then
    v_errors := app_hidden.add_error(v_errors, 'carry_over', 'Report : aucun (none), tout (all) ou jusqu''à un plafond (ceiling).');
  elsif p_carry_over = 'ceiling' and p_carry_over_ceiling is null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Le plafond du report est obligatoire pour un report plafonné.');
  elsif p_carry_over <> 'ceiling' and p_carry_over_ceiling is not null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Un plafond ne s''indique que pour un report plafonné : laissez ce champ vide.');
  end if;
  if p_carry_over_ceiling is not null and (p_carry_over_ceiling < 0 or p_carry_over_ceiling >= 1000 or p_carry_over_ceiling <> round(p_carry_over_ceiling, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Une quantité entre 0 et 999,99, deux décimales au plus.');
  end if;
  if p_carry_over_until is not null then
    if p_carry_over_until !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'
       or split_part(p_carry_over_until, '/', 1)::int
          > extract(day from make_date(2001, split_part(p_carry_over_until, '/', 2)::int, 1) + interval '1 month - 1 day') then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Une date de l''année suivante au format JJ/MM, par exemple 31/05 (le 29/02 n''existe pas chaque année).');
    elsif p_carry_over is not distinct from 'none' then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Sans report, il n''y a pas de date limite : laissez ce champ vide.');
    end if;
  end if;
  return v_errors;
end;
$$;
comment on function app_hidden.counter_rule_errors(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1: the refusals of a counter rule by field (establishment, counter_code, annual_amount, annual_amount_ouvrables, acquisition, rounding, prorate, carry_over, carry_over_ceiling, carry_over_until), {} when it passes.';

create or replace function app_hidden.counter_rule_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', r.id, 'establishment', r.establishment_id, 'establishment_name', e.name,
    'counter_code', r.counter_code, 'counter_name', k.name, 'unit', k.unit,
    'annual_amount', app_hidden.fmt_quantity(r.annual_amount),
    'annual_amount_ouvrables', app_hidden.fmt_quantity(r.annual_amount_ouvrables),
    'acquisition', r.acquisition, 'rounding', r.rounding, 'prorate', r.prorate,
    'carry_over', r.carry_over, 'carry_over_ceiling', app_hidden.fmt_quantity(r.carry_over_ceiling),
    'carry_over_until', r.carry_over_until,
    'monthly_amount', case when r.acquisition = 'monthly' then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount / 12, r.rounding)) end,
    'monthly_amount_ouvrables', case when r.acquisition = 'monthly' and r.annual_amount_ouvrables is not null
      then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount_ouvrables / 12, r.rounding)) end,
    'updated_at', r.updated_at)
  from app_public.counter_rules r
  join app_public.counter_kinds k on k.code = r.counter_code
  left join app_public.establishments e on e.id = r.establishment_id
  where r.id = p_id;
$$;

create or replace function app_public.counter_rules_search(p_establishment int default null, p_counter_code text default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with filtered as (
    select r.id, r.establishment_id, e.name, k.position, r.counter_code
    from app_public.counter_rules r
    join app_public.counter_kinds k on k.code = r.counter_code
    left join app_public.establishments e on e.id = r.establishment_id
    where (p_establishment is null or r.establishment_id = p_establishment)
      and (p_counter_code is null or r.counter_code = upper(p_counter_code))
  ),
  page as (
    select f.id, row_number() over (order by f.establishment_id is not null, lower(f.name), f.position, f.counter_code, f.id) as n
    from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.counter_rule_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.counter_rules_search(integer, text, integer, integer) is
'Issue 27 point 1, back-office: one page of the counter rules the caller reads (staff, or HR of the establishment; the association''s defaults first), filtered by establishment and counter code.';

create or replace function app_public.counter_rule_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_rules r where r.id = p_id) then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  return app_hidden.counter_rule_json(p_id)
         || jsonb_build_object('may_write', app_hidden.current_account_is_staff());
end;
$$;
comment on function app_public.counter_rule_get(integer) is
'Issue 27 point 1, back-office: one counter rule the caller reads (404 otherwise), with may_write for a staff account.';

-- Creates (p_id null) or rewrites a rule: staff only, every field error at once, audited.
create or replace function app_public.counter_rule_save(p_id int, p_establishment int, p_counter_code text,
                                                        p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                        p_acquisition text, p_rounding text, p_prorate boolean,
                                                        p_carry_over text, p_carry_over_ceiling numeric,
                                                        p_carry_over_until text)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_until text := nullif(btrim(p_carry_over_until), '');
  v_errors jsonb;
  v_id int := p_id;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s''écrivent par les comptes du personnel d''administration uniquement.', 'WF302');
  end if;
  if p_id is not null then
    perform 1 from app_public.counter_rules r where r.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
    end if;
  end if;
  v_errors := app_hidden.counter_rule_errors(p_id, p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables,
                                             p_acquisition, p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until);
  perform app_hidden.invalid_fields(v_errors, 'WV314') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                          rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
    values (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition,
            p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until)
    returning id into v_id;
  else
    update app_public.counter_rules r
    set establishment_id = p_establishment, counter_code = v_code, annual_amount = p_annual_amount,
        annual_amount_ouvrables = p_annual_amount_ouvrables, acquisition = p_acquisition, rounding = p_rounding,
        prorate = p_prorate, carry_over = p_carry_over, carry_over_ceiling = p_carry_over_ceiling, carry_over_until = v_until
    where r.id = p_id
      and (r.establishment_id, r.counter_code, r.annual_amount, r.annual_amount_ouvrables, r.acquisition, r.rounding, r.prorate,
           r.carry_over, r.carry_over_ceiling, r.carry_over_until)
          is distinct from (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition, p_rounding, p_prorate,
                            p_carry_over, p_carry_over_ceiling, v_until);
  end if;
  return app_public.counter_rule_get(v_id);
end;
$$;
comment on function app_public.counter_rule_save(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1, back-office: a staff account creates (p_id null) or rewrites the rule of a counter code for an establishment (null: the association''s default); every field error at once; audited.';

-- Deletes an establishment's rule (its employees follow the association's default again).
-- The defaults are edited, not deleted: a code without a default is managed by hand.
create or replace function app_public.counter_rule_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_rule app_public.counter_rules;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s''écrivent par les comptes du personnel d''administration uniquement.', 'WF302');
  end if;
  select * into v_rule from app_public.counter_rules r where r.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  if v_rule.establishment_id is null then
    perform app_hidden.invalid('non_field_errors', 'Une règle par défaut de l''association ne se supprime pas : modifiez-la (une quantité vide n''ouvre aucun compteur).', 'WV314');
  end if;
  delete from app_public.counter_rules r where r.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_rule_delete(integer) is
'Issue 27 point 1, back-office: a staff account deletes an establishment''s counter rule (its employees follow the association''s default again); a default is refused.';

-- The choices of the back-office's counter rule forms, as the caller reads them: 'establishments'
-- (value: id) or 'counters' (consumable codes).
create or replace function app_public.counter_rule_choices(p_what text) returns table (value text, label text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select x.value, x.label from (
    select e.id::text as value, e.name as label, lower(e.name) as sort_key, 0 as position
    from app_public.establishments e where p_what = 'establishments'
    union all
    select k.code, k.code || ' — ' || k.name, k.code, k.position
    from app_public.counter_kinds k where p_what = 'counters' and k.is_consumable
  ) x
  order by x.position, x.sort_key;
$$;
comment on function app_public.counter_rule_choices(text) is
'Issue 27 points 1 and 2, back-office: the choices of the counter rule and opening forms, establishments (id and name) or consumable counter codes.';
--! EndIncluded counters/rules.sql
--! Included counters/year.sql
-- The leave year (issue 27 points 2 to 4): opening the next year's counters from the counter
-- rules (sql/counters/rules.sql), the monthly acquisition, the carry-over and the expiry at
-- the year's end, and the notice of a balance about to expire.
--
-- Every amount is a movement of the journal (app_private.counter_movements) with its reason
-- in `comment` and its key (counter, kind, period): a job that runs late, twice or after a
-- crash writes each acquisition, carry-over and expiry once (the unique index
-- counter_movements_period_key; inserts say `on conflict do nothing`).
--
-- Locks: the opening and the monthly acquisition only add rows (new counters, credits) and
-- lock nothing that filing a request waits for (a request locks the counters it debits and
-- its employee's advisory key; a credit cannot overdraw, so it needs no lock). The year's end
-- and the expiry debit a counter: they lock that counter (for update, as every debit does)
-- for the rest of their transaction.

insert into app_private.job_schedules (job, local_time, isodow, description) values
  ('open_next_year_counters', '01:17', null, 'Ouverture des compteurs de l''année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
  ('acquire_monthly_counters', '01:27', null, 'Acquisition mensuelle des compteurs (mois terminés, une fois chacun), chaque jour à 1 h 27'),
  ('close_counter_years', '01:37', null, 'Report et expiration des soldes en fin d''année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
on conflict do nothing;

-- Notices already sent of a balance about to expire: one per counter and expiry date.
create table if not exists app_private.counter_expiry_notices (
  counter_id int not null references app_public.counters on delete cascade,
  expires_on date not null,
  notification_id bigint,
  sent_at timestamptz not null default app_hidden.now(),
  primary key (counter_id, expires_on)
);
alter table app_private.counter_expiry_notices enable row level security;

create or replace function app_hidden.month_name_fr(p_month int) returns text
language sql immutable as $$
  select (array['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre',
                'novembre', 'décembre'])[p_month];
$$;

-- The acquisitions of a counter of year p_year under a rule, due on p_today, for an employee
-- of an establishment counting in p_count_base: at the opening, one movement for the year
-- (prorated on the days of the year covered by a contract); month by month, one per month of
-- p_year - 1 that ended before p_today (prorated on the days of the month covered by a
-- contract). Rows of quantity 0 (no contract that month) are returned, not written.
create or replace function app_private.counter_acquisitions_due(p_employee int, p_year int, p_rule app_public.counter_rules,
                                                                p_count_base text, p_today date)
returns table (period date, quantity numeric, comment text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_amount numeric := app_hidden.counter_rule_amount(p_rule, p_count_base);
  v_unit text := (select k.unit from app_public.counter_kinds k where k.code = p_rule.counter_code);
  v_from date;
  v_to date;
  v_covered int;
  v_days int;
begin
  if v_amount is null or p_rule.id is null then
    return;
  end if;
  if p_rule.acquisition = 'opening' then
    v_from := make_date(p_year, 1, 1);
    v_to := make_date(p_year, 12, 31);
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_opening_part(v_amount, p_rule.rounding, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition %s à l''ouverture : %s%s', p_year, app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
    return;
  end if;
  for k in 1..12 loop
    v_from := make_date(p_year - 1, k, 1);
    v_to := (v_from + interval '1 month')::date - 1;
    exit when v_to >= p_today;
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_month_part(v_amount, p_rule.rounding, k, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition de %s %s pour %s : %s%s', app_hidden.month_name_fr(k), p_year - 1, p_year,
                      app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
  end loop;
end;
$$;

-- The plan of an opening of year p_year for the employees whose main workplace is
-- p_establishment (null: every employee): one row per counter to open (already_open false) or
-- already open, and one row per employee skipped, with the reason (code null). The amount
-- acquired at the opening is computed only for a counter to open, and only with p_amounts (the
-- writing reads its acquisitions again, movement by movement).
drop function if exists app_private.counter_opening_plan(int, int, date) cascade;
create or replace function app_private.counter_opening_plan(p_year int, p_establishment int, p_today date,
                                                            p_amounts boolean default true)
returns table (employee_id int, employee_name text, establishment_id int, code text, acquisition text,
               amount numeric, already_open boolean, skip_reason text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with people as (
    select e.id, e.last_name || ' ' || e.first_name as name, e.main_establishment_id, est.count_base,
           exists (select 1 from app_public.contracts c
                   where c.employee_id = e.id and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as any_contract,
           exists (select 1 from app_public.contracts c join app_public.contract_types t on t.id = c.contract_type_id
                   where c.employee_id = e.id and not t.is_temporary_work and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as own_contract
    from app_public.employees e
    left join app_public.establishments est on est.id = e.main_establishment_id
    where p_establishment is null or e.main_establishment_id = p_establishment
  ),
  codes as (
    -- Consumable codes that an active reason consumes (a counter of another code could not be active).
    select k.code, k.position from app_public.counter_kinds k
    where k.is_consumable and app_private.counter_code_has_reason(k.code)
  ),
  eligible as (
    select p.* from people p where p.main_establishment_id is not null and p.own_contract
  ),
  lines as (
    select o.id, o.name, o.main_establishment_id, o.code, o.position, (o.rule).acquisition,
           case when p_amounts and not o.already_open
                then (select coalesce(sum(d.quantity), 0)
                      from app_private.counter_acquisitions_due(o.id, p_year, o.rule, o.count_base, p_today) d) end as amount,
           o.already_open
    from (select p.id, p.name, p.main_establishment_id, p.count_base, c.code, c.position, rr.rule,
                 exists (select 1 from app_public.counters x where x.employee_id = p.id and x.code = c.code and x.year = p_year)
                   as already_open
          from eligible p
          cross join codes c
          cross join lateral (select app_private.counter_rule_for(p.main_establishment_id, c.code) as rule) rr
          where app_hidden.counter_rule_amount(rr.rule, p.count_base) is not null
          offset 0) o
  )
  select l.id, l.name, l.main_establishment_id, l.code, l.acquisition, l.amount, l.already_open, null::text
  from lines l
  union all
  select p.id, p.name, p.main_establishment_id, null, null, null, false,
         case when p.main_establishment_id is null
                then 'Sans établissement principal : aucune règle d''établissement ne s''applique.'
              when not p.any_contract then format('Aucun contrat en cours en %s.', p_year)
              when not p.own_contract then 'Contrat d''intérim seulement : ses congés relèvent de l''entreprise de travail temporaire.'
              else 'Aucune règle de son établissement n''ouvre de compteur.' end
  from people p
  where not exists (select 1 from lines l where l.id = p.id)
$$;

-- The answer of a preview and of an opening: how many counters (by code), how many already
-- open, the employees skipped and why.
create or replace function app_private.counter_opening_summary(p_year int, p_establishment int, p_today date)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with plan as materialized (select * from app_private.counter_opening_plan(p_year, p_establishment, p_today))
  select jsonb_build_object(
    'year', p_year,
    'establishment', p_establishment,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p_establishment),
    'employees', (select count(distinct p.employee_id) from plan p where p.skip_reason is null and not p.already_open),
    'counters', (select count(*) from plan p where p.skip_reason is null and not p.already_open),
    'already_open', (select count(*) from plan p where p.skip_reason is null and p.already_open),
    'by_code', coalesce((select jsonb_object_agg(x.code, jsonb_build_object('counters', x.n, 'acquired', app_hidden.fmt_quantity(x.total)))
                         from (select p.code, count(*) as n, sum(p.amount) as total from plan p
                               where p.skip_reason is null and not p.already_open group by p.code) x), '{}'::jsonb),
    'skipped', coalesce((select jsonb_agg(jsonb_build_object('employee', p.employee_id, 'employee_name', p.employee_name,
                                                             'reason', p.skip_reason) order by p.employee_name, p.employee_id)
                         from plan p where p.skip_reason is not null), '[]'::jsonb));
$$;

/*
 * Opens the counters of p_year from the rules for the employees of p_establishment (null:
 * the whole association) with a contract running into the year: each counter with its
 * acquisitions due (one journal movement each, with its reason). Idempotent: an open
 * counter is left alone, a second run writes nothing. Returns the summary of what it did
 * (counters: how many it opened). Adds rows only (no lock a filing waits for).
 */
create or replace function app_private.counters_open_year(p_year int, p_establishment int, p_today date)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_summary jsonb := app_private.counter_opening_summary(p_year, p_establishment, p_today);
  v_opened int;
  v_movements int;
begin
  with plan as (
    select * from app_private.counter_opening_plan(p_year, p_establishment, p_today, false) p
    where p.skip_reason is null and not p.already_open
  ), ins as (
    insert into app_public.counters (employee_id, code, year, acquisition)
    select p.employee_id, p.code, p_year, p.acquisition from plan p
    order by p.employee_id, p.code
    on conflict (employee_id, code, year) do nothing
    returning id, employee_id, code
  ), mov as (
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
    select ins.id, 'acquired', d.quantity, 'acquisition', app_hidden.current_account_id(), d.comment, d.period
    from ins
    join app_public.employees e on e.id = ins.employee_id
    join app_public.establishments est on est.id = e.main_establishment_id
    cross join lateral app_private.counter_acquisitions_due(ins.employee_id, p_year,
                                                            app_private.counter_rule_for(est.id, ins.code), est.count_base, p_today) d
    where d.quantity <> 0
    order by ins.id, d.period
    on conflict do nothing
    returning 1
  )
  select (select count(*) from ins), (select count(*) from mov) into v_opened, v_movements;

  v_summary := v_summary || jsonb_build_object('opened', v_opened, 'movements', v_movements);
  perform app_private.write_audit('Creation', 'counter_opening', p_year, null,
    jsonb_build_object('year', p_year, 'establishment', p_establishment, 'opened', v_opened, 'movements', v_movements,
                       'skipped', jsonb_array_length(v_summary -> 'skipped')))
  where v_opened > 0;
  return v_summary;
end;
$$;

-- The checks of a back-office opening: a staff account, a year this one or the next, an
-- establishment that exists (null: the whole association).
create or replace function app_hidden.counter_opening_check(p_year int, p_establishment int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_this int := extract(year from app_hidden.today())::int;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les compteurs s''ouvrent par les comptes du personnel d''administration uniquement.', 'WF302');
  end if;
  if p_year is null then
    v_errors := app_hidden.add_error(v_errors, 'year', 'L''année est obligatoire.');
  elsif p_year not between v_this and v_this + 1
        or p_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    v_errors := app_hidden.add_error(v_errors, 'year', format('Seuls les compteurs de %s ou de %s s''ouvrent.', v_this, v_this + 1));
  end if;
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV315') where v_errors <> '{}'::jsonb;
end;
$$;

create or replace function app_public.counter_opening_preview(p_year int, p_establishment int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counter_opening_summary(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_preview(integer, integer) is
'Issue 27 point 2, back-office: what opening the counters of a year (this one or the next) would write for an establishment or the whole association (null), without writing: counters by code, already open, employees skipped and why; staff only.';

create or replace function app_public.counter_opening_run(p_year int, p_establishment int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counters_open_year(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_run(integer, integer) is
'Issue 27 point 2, back-office: opens the counters of a year (this one or the next) from the counter rules for an establishment or the whole association (null), each acquisition a journal movement; idempotent; audited; staff only.';

-- Scheduled job open_next_year_counters: from the date of the setting counters_opening_date
-- (DD/MM, default 01/10) to the end of the year, opens next year's counters of the whole
-- association (each day: the employees hired since are opened too). Returns the number of
-- counters opened.
create or replace function app_private.open_next_year_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_setting text := app_hidden.setting('counters_opening_date') #>> '{}';
  v_year int := extract(year from p_today)::int;
  v_from date;
begin
  if v_setting is null or v_setting !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$' then
    raise exception 'open_next_year_counters: the setting counters_opening_date must be DD/MM (got %)', v_setting;
  end if;
  v_from := make_date(v_year, split_part(v_setting, '/', 2)::int, split_part(v_setting, '/', 1)::int);
  if p_today < v_from or v_year + 1 > app_hidden.last_accepted_year() then
    return 0;
  end if;
  return (app_private.counters_open_year(v_year + 1, null, p_today) ->> 'opened')::int;
end;
$$;

-- Scheduled job acquire_monthly_counters: each counter acquiring month by month receives the
-- part of every month of its acquisition period that has ended, once (key: counter, kind
-- acquisition, month), whenever the job runs. Returns the number of movements written.
create or replace function app_private.acquire_monthly_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int;
begin
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
  select c.id, 'acquired', d.quantity, 'acquisition', null, d.comment, d.period
  from app_public.counters c
  join app_public.employees e on e.id = c.employee_id
  join app_public.establishments est on est.id = e.main_establishment_id
  cross join lateral (select app_private.counter_rule_for(est.id, c.code) as rule) rr
  cross join lateral app_private.counter_acquisitions_due(c.employee_id, c.year, rr.rule, est.count_base, p_today) d
  where c.acquisition = 'monthly' and c.is_active and c.year in (v_year, v_year + 1) and (rr.rule).acquisition = 'monthly'
    and d.quantity <> 0
    and not exists (select 1 from app_private.counter_movements m
                    where m.counter_id = c.id and m.kind = 'acquisition' and m.period = d.period)
  order by c.id, d.period
  on conflict do nothing;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- What a rule carries over of a remaining balance.
create or replace function app_hidden.counter_carried(p_remaining numeric, p_carry_over text, p_ceiling numeric) returns numeric
language sql immutable as $$
  select case when p_remaining <= 0 then 0
              when p_carry_over = 'all' then p_remaining
              when p_carry_over = 'ceiling' then least(p_remaining, p_ceiling)
              else 0 end::numeric(8,2);
$$;

-- The year's end of p_year (from 1 January of p_year + 1): for each counter of p_year whose
-- code has a rule, the remaining balance moves to p_year + 1 within the rule (a compensating
-- carry_over movement in the old year, a carry_over acquisition in the new one) and what
-- exceeds it expires (an expiry movement in the old year). A counter whose employee has no
-- counter of the next year keeps its balance (reported, tried again the next day). Once per
-- counter. Returns the number of counters closed.
create or replace function app_private.counters_close_year(p_year int, p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_new_year date := make_date(p_year + 1, 1, 1);
  v_count int := 0;
  r record;
  v_remaining numeric;
  v_carried numeric;
  v_next int;
  v_unit text;
  v_deadline date;
begin
  if p_today < v_new_year then
    return 0;
  end if;
  for r in
    select c.id, c.employee_id, c.code, k.unit, k.name, rule.carry_over, rule.carry_over_ceiling, rule.carry_over_until
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    where c.year = p_year and rule.id is not null
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind in ('carry_over', 'expiry') and m.period = v_new_year)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_remaining := app_private.counter_remaining(r.id);
    continue when v_remaining <= 0;
    v_carried := app_hidden.counter_carried(v_remaining, r.carry_over, r.carry_over_ceiling);
    select c.id into v_next from app_public.counters c
    where c.employee_id = r.employee_id and c.code = r.code and c.year = p_year + 1 and c.is_active;
    if v_carried > 0 and v_next is null then
      raise notice 'counters_close_year: counter % keeps its balance: no open % counter in %', r.id, r.code, p_year + 1;
      continue;
    end if;
    v_deadline := app_hidden.counter_carry_over_deadline(r.carry_over_until, p_year);
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    select x.counter_id, 'acquired', x.quantity, x.kind, x.comment, v_new_year
    from (values
      (1, r.id, -v_carried, 'carry_over', format('Report vers %s : %s', p_year + 1, app_hidden.quantity_fr(v_carried, r.unit))),
      (2, r.id, v_carried - v_remaining, 'expiry',
       format('Expiration en fin d''année %s : %s %s', p_year, app_hidden.quantity_fr(v_remaining - v_carried, r.unit),
              case r.carry_over when 'none' then '(sans report)' else format('(au-delà du plafond de report de %s)',
                app_hidden.quantity_fr(r.carry_over_ceiling, r.unit)) end)),
      (3, v_next, v_carried, 'carry_over',
       format('Report du solde %s : %s%s', p_year, app_hidden.quantity_fr(v_carried, r.unit),
              case when v_deadline is null then '' else format(', à prendre au plus tard le %s', app_hidden.fr_date(v_deadline)) end))
    ) as x(n, counter_id, quantity, kind, comment)
    where x.quantity <> 0
    order by x.n
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- After the carry-over date (from the day after it): what was carried over into a counter and
-- is neither taken nor reserved expires, as one expiry movement (taken first draws on what was
-- carried over). Once per counter and date. Returns the number of counters expired.
create or replace function app_private.counters_expire_carry_over(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int := 0;
  r record;
  v_expired numeric;
begin
  for r in
    select c.id, c.year, k.unit, cm.quantity as carried, d.deadline
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    join app_private.counter_movements cm
      on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
    where c.year in (extract(year from p_today)::int, extract(year from p_today)::int - 1)
      and d.deadline < p_today
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind = 'expiry' and m.period = d.deadline)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_expired := least(greatest(r.carried - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                            where m.counter_id = r.id and m.bucket = 'taken'), 0),
                       app_private.counter_remaining(r.id));
    continue when v_expired <= 0;
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    values (r.id, 'acquired', -v_expired, 'expiry',
            format('Expiration du report de %s non pris au %s : %s', r.year - 1, app_hidden.fr_date(r.deadline),
                   app_hidden.quantity_fr(v_expired, r.unit)), r.deadline)
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- One month before a balance expires (the year's end beyond what carries over, or the
-- carry-over date), the employee is notified once per counter and date. Returns the number of
-- notifications.
create or replace function app_private.counter_expiry_notify(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int := 0;
  r record;
  v_account int;
  v_notification bigint;
begin
  for r in
    with year_end as (
      -- This year's counters: what exceeds the carry-over expires on 31 December.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year, make_date(c.year, 12, 31) as expires_on,
             b.remaining - app_hidden.counter_carried(b.remaining, rule.carry_over, rule.carry_over_ceiling) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_private.counter_remaining(c.id) as remaining) b
      where c.year = v_year and c.is_active and rule.id is not null
        and p_today >= (make_date(v_year, 12, 31) - interval '1 month')::date
    ), carried as (
      -- Counters holding a carry-over: what is neither taken nor reserved expires after its date.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year - 1 as year, d.deadline as expires_on,
             least(cm.quantity - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                  where m.counter_id = c.id and m.bucket in ('taken', 'planned')),
                   app_private.counter_remaining(c.id)) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      join app_private.counter_movements cm
        on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
      where c.year = v_year and c.is_active and d.deadline is not null
        and p_today between (d.deadline - interval '1 month')::date and d.deadline
    )
    select x.* from (select * from year_end union all select * from carried) x
    where x.amount > 0
      and not exists (select 1 from app_private.counter_expiry_notices n where n.counter_id = x.id and n.expires_on = x.expires_on)
    order by x.id
  loop
    v_account := app_private.employee_account_id(r.employee_id);
    v_notification := null;
    if v_account is not null then
      v_notification := app_private.notify(v_account, 'Congés bientôt perdus',
        format('%s de %s (%s) de %s expire(nt) le %s : posez-les avant cette date.',
               app_hidden.quantity_fr(r.amount, r.unit), r.code, r.name, r.year, app_hidden.fr_date(r.expires_on)),
        'warning', 'counter', r.id);
      v_count := v_count + 1;
    end if;
    insert into app_private.counter_expiry_notices (counter_id, expires_on, notification_id)
    values (r.id, r.expires_on, v_notification)
    on conflict do nothing;
  end loop;
  return v_count;
end;
$$;

-- Scheduled job close_counter_years: last year's end (once), the expiry of carry-overs past
-- their date, the notices of balances about to expire. Returns the number of counters closed
-- or expired plus the notifications sent.
create or replace function app_private.close_counter_years(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.counters_close_year(extract(year from p_today)::int - 1, p_today)
       + app_private.counters_expire_carry_over(p_today)
       + app_private.counter_expiry_notify(p_today);
end;
$$;

-- What « Mes compteurs » shows of a counter's year (issue 27 point 5), added to each counter of
-- GET /api/counters/: how it acquires; what a monthly counter will still acquire over the rest of
-- its acquisition period (the months not ended yet, under the contracts known today); what was
-- carried over into it, until when, and how much of it would expire then if not taken; and,
-- while its year is not closed, what of the remaining balance the rule carries over on
-- 31 December and what expires then.
create or replace function app_private.counter_year_facts(p_counter_id int, p_today date) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_counter app_public.counters;
  v_rule app_public.counter_rules;
  v_base text;
  v_amount numeric;
  v_to_come numeric;
  v_carried numeric;
  v_deadline date;
  v_remaining numeric := app_private.counter_remaining(p_counter_id);
  v_used numeric;
  v_from date;
  v_to date;
  v_year_end jsonb;
begin
  select * into v_counter from app_public.counters c where c.id = p_counter_id;
  select est.count_base into v_base
  from app_public.employees e join app_public.establishments est on est.id = e.main_establishment_id
  where e.id = v_counter.employee_id;
  v_rule := app_private.counter_rule_for((select e.main_establishment_id from app_public.employees e
                                          where e.id = v_counter.employee_id), v_counter.code);
  v_base := coalesce(v_base, 'ouvrables');

  if v_counter.acquisition = 'monthly' and v_rule.acquisition = 'monthly' then
    v_amount := app_hidden.counter_rule_amount(v_rule, v_base);
    v_to_come := 0;
    for k in 1..12 loop
      v_from := make_date(v_counter.year - 1, k, 1);
      v_to := (v_from + interval '1 month')::date - 1;
      continue when v_to < p_today
        or exists (select 1 from app_private.counter_movements m
                   where m.counter_id = p_counter_id and m.kind = 'acquisition' and m.period = v_from);
      v_to_come := v_to_come + app_hidden.counter_month_part(v_amount, v_rule.rounding, k,
        app_private.contract_days(v_counter.employee_id, v_from, v_to), v_to - v_from + 1, v_rule.prorate);
    end loop;
  end if;

  select sum(m.quantity) into v_carried from app_private.counter_movements m
  where m.counter_id = p_counter_id and m.kind = 'carry_over' and m.quantity > 0;
  if v_carried > 0 then
    v_deadline := app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year - 1);
    if exists (select 1 from app_private.counter_movements m
               where m.counter_id = p_counter_id and m.kind = 'expiry' and m.period = v_deadline) then
      v_deadline := null;
    end if;
    select coalesce(sum(m.quantity), 0) into v_used from app_private.counter_movements m
    where m.counter_id = p_counter_id and m.bucket in ('taken', 'planned');
  end if;

  if v_rule.id is not null
     and not exists (select 1 from app_private.counter_movements m
                     where m.counter_id = p_counter_id and m.kind in ('carry_over', 'expiry')
                       and m.period = make_date(v_counter.year + 1, 1, 1)) then
    v_year_end := jsonb_build_object(
      'carries_over', app_hidden.fmt_quantity(app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'expires', app_hidden.fmt_quantity(greatest(v_remaining, 0)
                   - app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'carry_over_until', case when v_rule.carry_over <> 'none'
                               then to_jsonb(app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year)) end);
  end if;

  return jsonb_build_object(
    'acquisition', v_counter.acquisition,
    'to_come', app_hidden.fmt_quantity(coalesce(v_to_come, 0)),
    'carried_over', app_hidden.fmt_quantity(coalesce(v_carried, 0)),
    'carry_over_expires_on', to_jsonb(v_deadline),
    'carry_over_expiring', case when v_deadline is not null
      then app_hidden.fmt_quantity(least(greatest(v_carried - v_used, 0), greatest(v_remaining, 0))) end,
    'year_end', v_year_end);
end;
$$;
--! EndIncluded counters/year.sql
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
-- Login throttling (sql/auth/rate_limits.sql): the API and back-office logins, as the authenticator.
grant execute on function app_private.login_throttle(text, text, text, int, int, interval),
  app_private.login_failed(text, text, text, interval, interval), app_private.login_succeeded(text, text, text)
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
