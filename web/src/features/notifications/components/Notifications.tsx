import { useState } from 'react';
import { ErrorNotice, Loading, Page, Pager } from '../../../components/ui';
import { frDateTime } from '../../../lib/format';
import { useMarkRead, useNotifications } from '../api/notifications';

const PAGE_SIZE = 20;

/** « Notifications »: the account's own, newest first, 20 a page; each unread one can be marked read. */
export function Notifications() {
  const [page, setPage] = useState(1);
  const list = useNotifications(page, PAGE_SIZE);
  const markRead = useMarkRead();
  return (
    <Page title="Notifications">
      {list.isPending && <Loading what="des notifications" />}
      <ErrorNotice error={list.error ?? markRead.error} />
      {list.data?.count === 0 && <p>Aucune notification.</p>}
      <ul className="cards">
        {list.data?.results.map((notification) => (
          <li key={notification.id} className={`card notification level-${notification.level}${notification.read_at ? ' read' : ''}`}
            aria-labelledby={`notification-${notification.id}`}>
            <div className="card-head">
              <h2 id={`notification-${notification.id}`}>{notification.title}</h2>
              {!notification.read_at && <span className="badge">Non lue</span>}
            </div>
            <p>{notification.body}</p>
            <p className="muted">
              <time dateTime={notification.created_at}>{frDateTime(notification.created_at)}</time>
            </p>
            {!notification.read_at && (
              <div className="actions">
                <button type="button" onClick={() => markRead.mutate(notification.id)} disabled={markRead.isPending}
                  aria-describedby={`notification-${notification.id}`}>
                  Marquer comme lue
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {list.data && <Pager label="Pages des notifications" page={page} pageSize={PAGE_SIZE} count={list.data.count} onPage={setPage} />}
    </Page>
  );
}
