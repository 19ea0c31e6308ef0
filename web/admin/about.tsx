import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import { Icon } from '../ui/icons.tsx';
import { Section } from '../ui/page.tsx';

type Latest =
  | { state: 'loading' }
  | { state: 'ok'; feed: Record<string, unknown> }
  | { state: 'unconfigured' }
  | { state: 'unreachable'; message: string };

/** Compares dotted version strings numerically: 0.10.0 is newer than 0.9.9. */
function newer(a: string, b: string): boolean {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) > (pb[i] ?? 0);
  }
  return false;
}

// Offline-first: the README and its docs/ installed beside the executable, and this server's own API reference; nothing elsewhere.
const INSTALLED_README = '/usr/local/share/doc/coffer/README.md';

/** The running version, what the update feed says is latest, and where backup and upgrade are explained. */
export function About() {
  const [backend, setBackend] = useState<string | null>(null);
  const [latest, setLatest] = useState<Latest>({ state: 'loading' });
  const check = async () => {
    setLatest({ state: 'loading' });
    try {
      setLatest({ state: 'ok', feed: await api.admin.latestVersion() });
    } catch (err) {
      setLatest({ state: 'unreachable', message: (err as Error).message });
    }
  };
  useEffect(() => {
    api.admin.version().then(
      (v) => {
        setBackend(v.backend);
        // Without a feed the server can only refuse (502): ask it only when there is one.
        if (v.updateFeed) void check();
        else setLatest({ state: 'unconfigured' });
      },
      () => setBackend(null),
    );
  }, []);

  let status;
  if (latest.state === 'loading' || !backend) status = <p class="muted">Checking for updates…</p>;
  else if (latest.state === 'unconfigured') {
    status = (
      <p class="update-state" role="status">
        <Icon name="info" />
        <span>
          Update checks are not configured: no update feed is set. Set <code>UPDATE_FEED_URL</code> in <code>/etc/coffer/coffer.env</code>{' '}
          and restart Coffer to see new versions here.
        </span>
      </p>
    );
  } else if (latest.state === 'unreachable') {
    status = (
      <p class="update-state warn" role="status">
        <Icon name="alert" />
        <span>The update feed could not be reached ({latest.message}). Coffer keeps working; check again later.</span>
        <button type="button" class="button small" onClick={check}>
          Check again
        </button>
      </p>
    );
  } else {
    const feed = latest.feed;
    const newest = typeof feed.backend === 'string' ? feed.backend : null;
    status =
      newest && newer(newest, backend) ? (
        <p class="update-state available" role="status">
          <Icon name="arrowUp" />
          <span>
            Update available: Coffer {newest} (this server runs {backend}). See Upgrade below.
          </span>
        </p>
      ) : (
        <p class="update-state ok" role="status">
          <Icon name="check" />
          <span>
            Coffer {backend} is up to date{newest ? ` (the latest is ${newest})` : ''}.
          </span>
        </p>
      );
  }
  const feed = latest.state === 'ok' ? latest.feed : null;
  return (
    <>
      <Section title="Version">
        <dl class="info-list wide">
          <dt>This server</dt>
          <dd>Coffer {backend ?? '…'}</dd>
          {feed && typeof feed.backend === 'string' && (
            <>
              <dt>Latest server</dt>
              <dd>{feed.backend}</dd>
            </>
          )}
          {feed && typeof feed.desktop === 'string' && (
            <>
              <dt>Latest desktop app</dt>
              <dd>{feed.desktop}</dd>
            </>
          )}
          {feed && typeof feed.frontend === 'string' && (
            <>
              <dt>Latest web app</dt>
              <dd>{feed.frontend}</dd>
            </>
          )}
        </dl>
        {status}
      </Section>
      <Section
        title="Backup and upgrade"
        intro={`Both are explained step by step in the documentation that comes with Coffer: docs/backup.md and docs/install.md beside its README (installed as ${INSTALLED_README}).`}
      >
        <ul class="links">
          <li>
            <strong>Back up and restore</strong>: <code>coffer backup --full &lt;file&gt;</code> writes everything (database, secrets.json
            and every file) to one archive while Coffer runs; <code>coffer restore &lt;file&gt; --data-dir &lt;empty directory&gt;</code>{' '}
            checks and restores it. The archive holds the master key: keep it as safe as the server.
          </li>
          <li>
            <strong>Upgrade</strong>: put the new executable next to <code>install.sh</code> and run <code>sudo sh install.sh</code> again;
            data and settings are kept.
          </li>
          <li>
            <a href="/api/docs">API reference</a>: every endpoint this server answers, also as <a href="/api/openapi.json">OpenAPI</a> for
            scripts.
          </li>
        </ul>
      </Section>
    </>
  );
}
