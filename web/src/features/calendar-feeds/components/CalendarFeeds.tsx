import { useId, useState } from 'react';
import type { Schemas } from '../../../api/client';
import { AppLink } from '../../../components/AppLink';
import { ErrorNotice, Loading, Page } from '../../../components/ui';
import { frDateTime } from '../../../lib/format';
import { paths } from '../../../lib/paths';
import { useCalendarFeeds, useFeedActions } from '../api/calendar-feeds';

type Kind = Schemas['CalendarFeedState']['kind'];
type Address = Schemas['CalendarFeedAddress'];

const WHAT: Record<Kind, string> = {
  planning: 'Vos jours travaillés (horaires et poste), vos absences, vos journées modifiées et vos astreintes.',
  perimeter: 'Qui est absent, et quand, parmi les salariés de votre périmètre. Le motif n’apparaît que si vous décidez de leurs absences ; sinon « Absent(e) ».',
};

/**
 * « Mon compte › Agendas »: the account's iCalendar feeds. The secret address is shown only
 * when it is created or renewed (the server keeps a hash of it).
 */
export function CalendarFeeds() {
  const list = useCalendarFeeds();
  const feeds = list.data?.feeds.filter((feed) => feed.allowed || feed.active) ?? [];
  return (
    <Page title="Agendas" actions={<AppLink to={paths.account()}>Retour à mon compte</AppLink>}>
      <p>
        Abonnez l’agenda de votre téléphone ou de votre messagerie à votre planning : il se met à jour tout seul,
        de 3 mois en arrière à 12 mois en avant. L’agenda est en lecture seule : vos demandes se font toujours ici.
      </p>
      <details className="help">
        <summary>Comment s’abonner ?</summary>
        <ol>
          <li>Créez le flux ci-dessous, puis copiez son adresse.</li>
          <li>iPhone ou iPad : Réglages › Calendrier › Comptes › Ajouter un compte › Autre › Ajouter un calendrier avec abonnement, puis collez l’adresse.</li>
          <li>Android (Google Agenda) : sur ordinateur, calendar.google.com › Autres agendas › + › À partir de l’URL, puis collez l’adresse ; l’agenda apparaît ensuite sur le téléphone.</li>
          <li>Outlook : Ajouter un calendrier › S’abonner à partir du web, puis collez l’adresse.</li>
        </ol>
        <p>
          L’adresse est secrète : toute personne qui la connaît lit ce flux. Ne la partagez pas. Si vous l’avez
          perdue ou transmise par erreur, renouvelez-la : l’ancienne cesse aussitôt de fonctionner.
        </p>
      </details>
      {list.isPending && <Loading what="de vos agendas" />}
      <ErrorNotice error={list.error} />
      <ul className="cards">
        {feeds.map((feed) => (
          <FeedCard key={feed.kind} feed={feed} />
        ))}
      </ul>
    </Page>
  );
}

function FeedCard({ feed }: { feed: Schemas['CalendarFeedState'] }) {
  const id = useId();
  const [address, setAddress] = useState<Address | null>(null);
  const [removed, setRemoved] = useState(false);
  const { create, rotate, revoke } = useFeedActions(feed.kind, (result) => {
    setAddress(result);
    setRemoved(result === null);
  });
  const busy = create.isPending || rotate.isPending || revoke.isPending;
  return (
    <li className="card" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h2 id={`${id}-title`}>{feed.label}</h2>
        {feed.active && <span className="badge">Actif</span>}
      </div>
      <p>{WHAT[feed.kind]}</p>
      <p className="muted">
        {feed.active && feed.created_at ? (
          <>Adresse créée ou renouvelée le <time dateTime={feed.created_at}>{frDateTime(feed.created_at)}</time>.</>
        ) : (
          'Aucun flux pour le moment.'
        )}
      </p>
      {address && <AddressBox address={address} />}
      {removed && <p className="notice success" role="status">Flux supprimé : son adresse ne fonctionne plus.</p>}
      <ErrorNotice error={create.error ?? rotate.error ?? revoke.error} />
      <div className="actions">
        {!feed.active && feed.allowed && (
          <button type="button" onClick={() => create.mutate()} disabled={busy} aria-describedby={`${id}-title`}>
            Créer le flux
          </button>
        )}
        {feed.active && feed.allowed && (
          <button type="button" onClick={() => rotate.mutate()} disabled={busy} aria-describedby={`${id}-title`}>
            Renouveler l’adresse
          </button>
        )}
        {feed.active && (
          <button type="button" onClick={() => revoke.mutate()} disabled={busy} aria-describedby={`${id}-title`}>
            Supprimer le flux
          </button>
        )}
      </div>
    </li>
  );
}

/** The secret address, once: to copy, or to open in the device's calendar (webcal:). */
function AddressBox({ address }: { address: Address }) {
  const id = useId();
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(address.url);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div className="feed-address">
      <label htmlFor={`${id}-url`}>Adresse d’abonnement (affichée cette fois seulement)</label>
      <input id={`${id}-url`} type="text" readOnly value={address.url} onFocus={(event) => event.currentTarget.select()} />
      <div className="actions">
        <button type="button" onClick={() => void copy()}>Copier l’adresse</button>
        <a href={address.url.replace(/^https?:/, 'webcal:')}>Ouvrir dans mon agenda</a>
      </div>
      <p role="status" className="muted">
        {copied === true && 'Adresse copiée.'}
        {copied === false && 'La copie a échoué : sélectionnez l’adresse et copiez-la.'}
      </p>
    </div>
  );
}
