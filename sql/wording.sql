-- One apostrophe style (issue 29 point 5): the reference data every database holds writes the
-- typographic apostrophe ’ (U+2019), as the screens do. The seed inserts (on conflict do nothing)
-- write it for a new database; these updates change the rows an existing database already holds,
-- from the exact text the seed wrote before (the new one with ' for ’) to the new one: a name a
-- staff member changed since is left alone, and a second run finds nothing to change (idempotent).
-- The exceptions SPEC.md and CONTRACT.md write literally are listed in docs/wording.md.
--
-- app_private.wording_typographic() does it and answers how many rows it changed: called below at
-- each migration, and by test/db/95-wording.sql on rows put back as they were.
create or replace function app_private.wording_typographic() returns int
language plpgsql volatile set search_path = pg_catalog, public, pg_temp as $$
declare
  v_total int := 0;
  v_rows int;
begin
  update app_private.audit_models t set label = v.new
  from (values
    ('Catégorie d’absence'),
    ('Flux d’agenda'),
    ('Justificatif d’absence'),
    ('Motif d’absence'),
    ('Ouverture des compteurs d’une année'),
    ('Période d’astreinte'),
    ('Type de contrat d’un motif d’absence'),
    ('Établissement d’une astreinte'),
    ('Établissement d’une délégation'),
    ('Établissement d’une équipe')
  ) v(new)
  where t.label = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_private.job_schedules t set description = v.new
  from (values
    ('Ouverture des compteurs de l’année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
    ('Purge du journal d’audit au-delà de la rétention, le dimanche à 3 h 47'),
    ('Report et expiration des soldes en fin d’année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_private.settings t set description = v.new
  from (values
    ('Date (JJ/MM) à partir de laquelle les compteurs de l’année suivante s’ouvrent chaque jour (tâche open_next_year_counters)'),
    ('Durée de conservation du journal d’audit, en jours'),
    ('Durée de validité d’un lien de réinitialisation'),
    ('Durée de validité d’une invitation à définir son mot de passe'),
    ('Durée maximale d’une session du back-office (heures)'),
    ('Délai de prévenance d’une modification de journée, en jours (avertissement au détail)'),
    ('Nombre de tentatives d’envoi d’un e-mail avant abandon (il reste visible dans la boîte d’envoi)')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.absence_categories t set name = v.new
  from (values
    ('Autorisations d’absence'),
    ('Formation à l’initiative du salarié')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.absence_types t set name = v.new
  from (values
    ('Annonce du handicap d’un enfant'),
    ('Congé d’adoption'),
    ('Congé de paternité et d’accueil de l’enfant'),
    ('Congé parental d’éducation'),
    ('Congés d’ancienneté'),
    ('Décès d’un enfant'),
    ('Décès d’un proche'),
    ('Juré d’assises ou convocation judiciaire'),
    ('Mariage d’un enfant'),
    ('Validation des acquis de l’expérience')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.contract_types t set name = v.new
  from (values
    ('Contrat d’apprentissage'),
    ('Mission d’intérim')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.counter_kinds t set name = v.new
  from (values
    ('Congés d’ancienneté')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.permissions t set description = v.new
  from (values
    ('Lire l’annuaire (encadrement)'),
    ('Lire le contenu des justificatifs d’un tiers'),
    ('Lire le journal d’audit'),
    ('Lire les contacts d’urgence des salariés du périmètre'),
    ('Lire les demandes d’absence et de modification du périmètre'),
    ('Modifier les contacts d’urgence des salariés du périmètre'),
    ('Ouvrir ou fermer n’importe quel compte'),
    ('Valider ou refuser une demande d’absence')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;
  return v_total;
end;
$$;

select app_private.wording_typographic();
