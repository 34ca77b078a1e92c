-- Absences and their documents.

create table if not exists app_public.absences (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  type_id int not null references app_public.absence_types on delete restrict,
  date_start date not null,
  date_end date not null,
  -- Half-days (CONTRACT section 7): start_half 'afternoon' = the morning of date_start is
  -- worked; end_half 'morning' = the afternoon of date_end is worked; null = whole day.
  start_half text check (start_half in ('morning', 'afternoon')),
  end_half text check (end_half in ('morning', 'afternoon')),
  -- Hourly types: one date, start and end hours.
  start_time time,
  end_time time,
  comment text check (char_length(comment) <= app_hidden.comment_max_length()),
  status text not null default 'pending'
    check (status in ('pending', 'validated', 'refused', 'cancellation_requested', 'cancelled')),
  version int not null default 1 check (version >= 1),
  counted_quantity numeric(8,2),
  counted_unit text check (counted_unit in ('day', 'hour')),
  author_account_id int references app_public.accounts on delete set null,
  submitted_at timestamptz,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  decided_by int references app_public.accounts on delete set null,
  decided_at timestamptz,
  decision_reason text,
  corrected_by int references app_public.accounts on delete set null,
  cancellation_comment text,
  cancellation_requested_at timestamptz,
  cancellation_decided_at timestamptz,
  cancellation_decided_by int references app_public.accounts on delete set null,
  cancellation_decision_reason text,
  cancelled_by int references app_public.accounts on delete set null,
  cancelled_at timestamptz,
  -- Warnings raised by the last write (creation, correction, decision): agreement rules,
  -- notice periods, caps with Avertir, non-splittable periods, event conflicts.
  warnings jsonb not null default '[]'::jsonb check (jsonb_typeof(warnings) = 'array'),
  -- Time covered, for overlap: a morning is [00:00, 12:00), an afternoon [12:00, 24:00).
  period tsrange generated always as (
    case when start_time is not null then
      tsrange(date_start + start_time, date_start + end_time)
    else
      tsrange(date_start + case when start_half = 'afternoon' then time '12:00' else time '00:00' end,
              (date_end + case when end_half = 'morning' then 0 else 1 end)
                + case when end_half = 'morning' then time '12:00' else time '00:00' end)
    end) stored,
  constraint absences_dates check (date_end >= date_start),
  constraint absences_hours_pair check ((start_time is null) = (end_time is null)),
  constraint absences_hours_single_day check (start_time is null or (date_end = date_start and end_time > start_time
                                                                      and start_half is null and end_half is null)),
  constraint absences_half_day_order check (not (date_start = date_end and start_half = 'afternoon' and end_half = 'morning')),
  -- Active absences of one employee never overlap, even under concurrent writes.
  constraint absences_no_overlap exclude using gist (employee_id with =, period with &&)
    where (status in ('pending', 'validated', 'cancellation_requested'))
);
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.absences', 'absences_comment_check',
  '((char_length(comment) <= app_hidden.comment_max_length()))');
create index if not exists absences_employee_dates_idx on app_public.absences (employee_id, date_start, date_end);
-- Queues (GET /api/absences/?status=): the whole association's in date order, a perimeter's
-- by employee; both cover what the list and its row-level security read (index-only scans).
create index if not exists absences_status_idx on app_public.absences (status, date_start, id) include (employee_id);
create index if not exists absences_status_employee_idx on app_public.absences (status, employee_id, date_start) include (id);
create index if not exists absences_type_idx on app_public.absences (type_id);
create index if not exists absences_author_idx on app_public.absences (author_account_id);

create table if not exists app_public.absence_documents (
  id int generated always as identity primary key,
  absence_id int not null references app_public.absences on delete cascade,
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
  -- Name of the file in the storage directory (random, never derived from user input).
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null
);
create index if not exists absence_documents_absence_idx on app_public.absence_documents (absence_id);

-- One honorability certificate (attestation d'honorabilité) per employee.
create table if not exists app_public.honorability_certificates (
  employee_id int primary key references app_public.employees on delete cascade,
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null
);

-- The size limit of a file is app_hidden.document_max_bytes(); a database created when the
-- CHECKs held the number itself gets them replaced.
alter table app_public.absence_documents drop constraint if exists absence_documents_size_bytes_check,
  add constraint absence_documents_size_bytes_check check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());
alter table app_public.honorability_certificates drop constraint if exists honorability_certificates_size_bytes_check,
  add constraint honorability_certificates_size_bytes_check
    check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());

-- Files whose rows were deleted: removed from the storage directory after commit by the
-- worker (a rolled-back deletion never loses a file).
create table if not exists app_private.storage_garbage (
  storage_key text primary key,
  queued_at timestamptz not null default app_hidden.now()
);

create or replace trigger _100_timestamps before insert or update on app_public.absences
  for each row execute function app_hidden.tg__timestamps();
