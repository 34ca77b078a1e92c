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
    'Le détail (type d’absence, motif, commentaires, justificatifs) ne part jamais par e-mail : il se lit dans l’application, après connexion.',
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
    'Vous avez une nouvelle notification dans l’application de planning.',
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
    perform app_hidden.forbidden('Connectez-vous pour lire vos préférences d’e-mail.', 'WF603');
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
    perform app_hidden.forbidden('Connectez-vous pour choisir vos préférences d’e-mail.', 'WF603');
  end if;
  if p_own is null or p_own <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'own', v_message); end if;
  if p_decide is null or p_decide <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'decide', v_message); end if;
  if p_planning is null or p_planning <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'planning', v_message); end if;
  if p_digest_hour is null or p_digest_hour not between 0 and 23 then
    v_errors := app_hidden.add_error(v_errors, 'digest_hour', 'L’heure du résumé quotidien est une heure entière de 0 à 23.');
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
    'detail', format('Vous ne recevrez plus d’e-mail pour : %s. Vous pouvez changer d’avis dans « Mon compte ».',
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
