import { useState } from 'react';
import { AppLink } from '../../../components/AppLink';
import { ErrorNotice, Loading, Page, Pager } from '../../../components/ui';
import { frDateTime } from '../../../lib/format';
import { appPath, type AppPath } from '../../../lib/paths';
import { useMarkAllRead, useMarkRead, useNotifications, useUnreadCount } from '../api/notifications';

const PAGE_SIZE = 20;

/** The words of a notification's link, from the address it leads to. */
function linkLabel(path: AppPath): string {
  if (path.startsWith('/file/')) return 'Ouvrir la demande à décider';
  if (path.startsWith('/demandes/')) return 'Voir ma demande';
  if (path.startsWith('/equipe')) return 'Voir le planning d’équipe';
  return 'Ouvrir « Mon compte »';
}

/**
 * « Notifications »: the account's own, newest first, 20 a page. Each leads to what it is about
 * (the decision panel for a decider, the request for its author; opening it marks it read), each
 * unread one can be marked read, and « Tout marquer comme lu » marks them all.
 */
export function Notifications() {
  const [page, setPage] = useState(1);
  const list = useNotifications(page, PAGE_SIZE);
  const unread = useUnreadCount();
  const markRead = useMarkRead();
  const markAllRead = useMarkAllRead();
  return (
    <Page title="Notifications"
      actions={unread ? (
        <button type="button" onClick={() => markAllRead.mutate()} disabled={markAllRead.isPending}>
          Tout marquer comme lu
        </button>
      ) : undefined}>
      {list.isPending && <Loading what="des notifications" />}
      <ErrorNotice error={list.error ?? markRead.error ?? markAllRead.error} />
      {markAllRead.isSuccess && (
        <p className="notice" role="status">
          {markAllRead.data.count === 0 ? 'Tout était déjà lu.'
            : `${markAllRead.data.count} notification${markAllRead.data.count > 1 ? 's marquées lues' : ' marquée lue'}.`}
        </p>
      )}
      {list.data?.count === 0 && <p>Aucune notification.</p>}
      <ul className="cards">
        {list.data?.results.map((notification) => {
          const to = appPath(notification.path);
          const titleId = `notification-${notification.id}`;
          return (
            <li key={notification.id} className={`card notification level-${notification.level}${notification.read_at ? ' read' : ''}`}
              aria-labelledby={titleId}>
              <div className="card-head">
                <h2 id={titleId}>{notification.title}</h2>
                {!notification.read_at && <span className="badge">Non lue</span>}
              </div>
              <p>{notification.body}</p>
              <p className="muted">
                <time dateTime={notification.created_at}>{frDateTime(notification.created_at)}</time>
              </p>
              {(to || !notification.read_at) && (
                <div className="actions">
                  {to && (
                    <AppLink to={to} aria-describedby={titleId}
                      onClick={() => { if (!notification.read_at) markRead.mutate(notification.id); }}>
                      {linkLabel(to)}
                    </AppLink>
                  )}
                  {!notification.read_at && (
                    <button type="button" onClick={() => markRead.mutate(notification.id)} disabled={markRead.isPending}
                      aria-describedby={titleId}>
                      Marquer comme lue
                    </button>
                  )}
                </div>
              )}
            </li>
          );
        })}
      </ul>
      {list.data && <Pager label="Pages des notifications" page={page} pageSize={PAGE_SIZE} count={list.data.count} onPage={setPage} />}
    </Page>
  );
}
