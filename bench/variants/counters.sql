-- Ablation: the counter journal of a transition (app_private.absence_sync_counters: the target,
-- the counters locked, the movements written) replaced by nothing.
create or replace function app_private.absence_sync_counters(p_absence_id int, p_transition text, p_today date default null,
                                                             p_plan jsonb default null)
returns jsonb
language sql volatile as $$
  select '[]'::jsonb;
$$;
