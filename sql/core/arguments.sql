-- Typed arguments (docs/architecture.md, "One input contract", "Typed arguments"): an API
-- function takes one typed argument per key of its body. Two things a typed argument cannot
-- say are written once here:
--
-- * whether a key was sent at all. A write that keeps what the body leaves out (PATCH, PUT,
--   the correction preview of an absence) cannot tell an absent key from a null one by its
--   argument; it takes the body's keys in `p_sent text[]` (the REST router passes them, manifest
--   `from: 'body-keys'`). A caller that gives no list (GraphQL) sends the arguments it gives
--   non-null: only a list can clear a value.
-- * the checks of a list of ids that the route schema makes (integers, no repeat), for a caller
--   that reaches the function without it (GraphQL).

-- Was the key sent? Never NULL (app_private.never_null_guards).
create or replace function app_hidden.sent(p_sent text[], p_key text, p_given boolean) returns boolean
language sql immutable parallel safe as $$
  select case when p_sent is null then coalesce(p_given, false) else coalesce(p_key = any (p_sent), false) end;
$$;

-- The refusal of a list of ids that the route schema would not accept (a null item, an id
-- twice), in the words of the former JSON reader; null when the list is acceptable (or null).
create or replace function app_hidden.id_list_refusal(p_ids int[]) returns text
language sql immutable parallel safe as $$
  select case
    when array_position(p_ids, null) is not null then 'Une liste d’identifiants (nombres entiers) est attendue.'
    when cardinality(p_ids) <> (select count(distinct i) from unnest(p_ids) i) then 'La liste contient des doublons.'
  end;
$$;

-- A text argument as the rules read it: trimmed, an empty text counting as none.
create or replace function app_hidden.trimmed(p_text text) returns text
language sql immutable parallel safe as $$
  select nullif(btrim(p_text), '');
$$;

-- The keys a write takes as sent: the list given, or (no list: GraphQL) the keys of the
-- arguments given non-null (p_keys and p_given pair up). For a function that hands "was it
-- sent?" to helpers which no longer see the arguments (the absence draft).
create or replace function app_hidden.keys_sent(p_sent text[], p_keys text[], p_given boolean[]) returns text[]
language sql immutable parallel safe as $$
  select coalesce(p_sent, array(select k from unnest(p_keys, p_given) u(k, g) where g));
$$;
