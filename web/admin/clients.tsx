import { api } from '../api/index.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { LoadError, Section, TableWrap } from '../ui/page.tsx';

/** Desktop clients seen in the last five minutes, refreshed while the page is open. */
export function Clients() {
  const list = useLoad(api.admin.clients, { everyMs: 30_000 });
  const clients = list.data?.clients ?? [];
  return (
    <Section
      title="Desktop clients"
      intro="Coffer desktop apps and Nextcloud clients (desktop and mobile) that checked in during the last five minutes, with their version and platform, so you can see who still runs an old one."
    >
      {list.error && <LoadError message={list.error} retry={list.reload} />}
      {list.data && clients.length === 0 && <p class="muted">No desktop client has checked in during the last five minutes.</p>}
      {clients.length > 0 && (
        <TableWrap label="Desktop clients seen in the last five minutes">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">App version</th>
                <th scope="col">Platform</th>
                <th scope="col">Address</th>
                <th scope="col">Last seen</th>
                <th scope="col">Connected since</th>
              </tr>
            </thead>
            <tbody>
              {clients.map((c) => (
                <tr key={c.id}>
                  <td>
                    {c.userName || c.userEmail}
                    <div class="muted small">{c.userEmail}</div>
                  </td>
                  <td>{c.appVersion}</td>
                  <td>{c.platform || '—'}</td>
                  <td>{c.ipAddress}</td>
                  <td title={exactDate(c.lastSeenAt)}>{formatDate(c.lastSeenAt)}</td>
                  <td title={exactDate(c.connectedSince)}>{formatDate(c.connectedSince)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Section>
  );
}
