-- Generic trigger functions. Trigger names carry their order:
-- _100_timestamps, _200_guard, _500_audit, _900_enqueue.
create or replace function app_hidden.tg__timestamps() returns trigger
language plpgsql volatile as $$
begin
  if tg_op = 'UPDATE' then
    new.updated_at := app_hidden.now();
  end if;
  return new;
end;
$$;
