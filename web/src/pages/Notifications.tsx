import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api/client';
import { frDateTime } from '../format';
import { ErrorNotice, Loading, Page, Pager } from '../ui';

const PAGE_SIZE = 20;

/** The number of unread notifications, for the header (refreshed every minute). */
export function useUnreadCount(): number | undefined {
  const unread = useQuery({
    queryKey: ['notifications', 'unread-count'],
    queryFn: () => ok(api.GET('/api/notifications/', { params: { query: { unread: true, page_size: 1 } } })),
    refetchInterval: 60_000,
  });
  return unread.data?.count;
}

export function Notifications() {
  const [page, setPage] = useState(1);
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: ['notifications', 'list', page],
    queryFn: () => ok(api.GET('/api/notifications/', { params: { query: { page, page_size: PAGE_SIZE } } })),
  });
  const markRead = useMutation({
    mutationFn: (id: number) => ok(api.POST('/api/notifications/{id}/read/', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['notifications'] }),
  });
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
