-- One apostrophe style (issue 29 point 5): the reference data every database holds writes the
-- typographic apostrophe ’ (U+2019), as the screens do. The seed inserts (on conflict do nothing)
-- write it for a new database; these updates change the rows an existing database already holds,
-- from the exact text the seed wrote before to the new one: a name a staff member changed since
-- is left alone, and a second run finds nothing to change (idempotent).
-- The exceptions SPEC.md and CONTRACT.md write literally are listed in docs/wording.md.

update app_private.audit_models t set label = v.new
from (values
  ('Catégorie d''absence', 'Catégorie d’absence'),
  ('Flux d''agenda', 'Flux d’agenda'),
  ('Justificatif d''absence', 'Justificatif d’absence'),
  ('Motif d''absence', 'Motif d’absence'),
  ('Ouverture des compteurs d''une année', 'Ouverture des compteurs d’une année'),
  ('Période d''astreinte', 'Période d’astreinte'),
  ('Type de contrat d''un motif d''absence', 'Type de contrat d’un motif d’absence'),
  ('Établissement d''une astreinte', 'Établissement d’une astreinte'),
  ('Établissement d''une délégation', 'Établissement d’une délégation'),
  ('Établissement d''une équipe', 'Établissement d’une équipe')
) v(old, new)
where t.label = v.old;

update app_private.job_schedules t set description = v.new
from (values
  ('Ouverture des compteurs de l''année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17', 'Ouverture des compteurs de l’année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
  ('Purge du journal d''audit au-delà de la rétention, le dimanche à 3 h 47', 'Purge du journal d’audit au-delà de la rétention, le dimanche à 3 h 47'),
  ('Report et expiration des soldes en fin d''année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37', 'Report et expiration des soldes en fin d’année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
) v(old, new)
where t.description = v.old;

update app_private.settings t set description = v.new
from (values
  ('Date (JJ/MM) à partir de laquelle les compteurs de l''année suivante s''ouvrent chaque jour (tâche open_next_year_counters)', 'Date (JJ/MM) à partir de laquelle les compteurs de l’année suivante s’ouvrent chaque jour (tâche open_next_year_counters)'),
  ('Durée de conservation du journal d''audit, en jours', 'Durée de conservation du journal d’audit, en jours'),
  ('Durée de validité d''un lien de réinitialisation', 'Durée de validité d’un lien de réinitialisation'),
  ('Durée de validité d''une invitation à définir son mot de passe', 'Durée de validité d’une invitation à définir son mot de passe'),
  ('Durée maximale d''une session du back-office (heures)', 'Durée maximale d’une session du back-office (heures)'),
  ('Délai de prévenance d''une modification de journée, en jours (avertissement au détail)', 'Délai de prévenance d’une modification de journée, en jours (avertissement au détail)'),
  ('Nombre de tentatives d''envoi d''un e-mail avant abandon (il reste visible dans la boîte d''envoi)', 'Nombre de tentatives d’envoi d’un e-mail avant abandon (il reste visible dans la boîte d’envoi)')
) v(old, new)
where t.description = v.old;

update app_public.absence_categories t set name = v.new
from (values
  ('Autorisations d''absence', 'Autorisations d’absence'),
  ('Formation à l''initiative du salarié', 'Formation à l’initiative du salarié')
) v(old, new)
where t.name = v.old;

update app_public.absence_types t set name = v.new
from (values
  ('Annonce du handicap d''un enfant', 'Annonce du handicap d’un enfant'),
  ('Congé d''adoption', 'Congé d’adoption'),
  ('Congé de paternité et d''accueil de l''enfant', 'Congé de paternité et d’accueil de l’enfant'),
  ('Congé parental d''éducation', 'Congé parental d’éducation'),
  ('Congés d''ancienneté', 'Congés d’ancienneté'),
  ('Décès d''un enfant', 'Décès d’un enfant'),
  ('Décès d''un proche', 'Décès d’un proche'),
  ('Juré d''assises ou convocation judiciaire', 'Juré d’assises ou convocation judiciaire'),
  ('Mariage d''un enfant', 'Mariage d’un enfant'),
  ('Validation des acquis de l''expérience', 'Validation des acquis de l’expérience')
) v(old, new)
where t.name = v.old;

update app_public.contract_types t set name = v.new
from (values
  ('Contrat d''apprentissage', 'Contrat d’apprentissage'),
  ('Mission d''intérim', 'Mission d’intérim')
) v(old, new)
where t.name = v.old;

update app_public.counter_kinds t set name = v.new
from (values
  ('Congés d''ancienneté', 'Congés d’ancienneté')
) v(old, new)
where t.name = v.old;

update app_public.permissions t set description = v.new
from (values
  ('Lire l''annuaire (encadrement)', 'Lire l’annuaire (encadrement)'),
  ('Lire le contenu des justificatifs d''un tiers', 'Lire le contenu des justificatifs d’un tiers'),
  ('Lire le journal d''audit', 'Lire le journal d’audit'),
  ('Lire les contacts d''urgence des salariés du périmètre', 'Lire les contacts d’urgence des salariés du périmètre'),
  ('Lire les demandes d''absence et de modification du périmètre', 'Lire les demandes d’absence et de modification du périmètre'),
  ('Modifier les contacts d''urgence des salariés du périmètre', 'Modifier les contacts d’urgence des salariés du périmètre'),
  ('Ouvrir ou fermer n''importe quel compte', 'Ouvrir ou fermer n’importe quel compte'),
  ('Valider ou refuser une demande d''absence', 'Valider ou refuser une demande d’absence')
) v(old, new)
where t.description = v.old;

