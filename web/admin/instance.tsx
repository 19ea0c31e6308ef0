import { useEffect, useState } from 'preact/hooks';
import { parseSize } from '../../src/contract/size.ts';
import { api } from '../api/index.ts';
import { formatSize, plural, sizeInput } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { instance } from '../app/session.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';
import { Outcome, SettingForm, Toggle, useSave } from './setting-form.tsx';

// docs/api.md › Instance settings: the maximum upload size the server accepts, in bytes.
const MAX_UPLOAD = { min: 1024 ** 2, max: 100 * 1024 ** 3 };

function MaxUpload() {
  const current = useLoad(api.settings.maxUploadSize);
  const [text, setText] = useState('');
  const s = useSave();
  useEffect(() => {
    if (current.data) setText(sizeInput(current.data.maxBytes));
  }, [current.data]);
  return (
    <SettingForm
      title="Maximum upload size"
      intro="The largest single file anyone may upload. Larger files are refused before any byte is sent."
      save={s}
      ready={!!current.data}
      loadError={current.error}
      inline
      onSubmit={() =>
        void s.save(async () => {
          const bytes = parseSize(text);
          if (bytes === null) throw new Error(`“${text}” is not a size. Type one such as 10G or 500M.`);
          if (bytes < MAX_UPLOAD.min || bytes > MAX_UPLOAD.max)
            throw new Error(`The maximum upload size must be between ${formatSize(MAX_UPLOAD.min)} and ${formatSize(MAX_UPLOAD.max)}.`);
          const r = await api.settings.setMaxUploadSize(bytes);
          setText(sizeInput(r.maxBytes));
          return `Saved: files up to ${formatSize(r.maxBytes)}.`;
        })
      }
    >
      <Field label="Maximum upload size" hint="A size from 1M to 100G, such as 10G or 500M.">
        <input required value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
    </SettingForm>
  );
}

function ShareBaseUrl() {
  const current = useLoad(api.settings.shareBaseUrl);
  const [text, setText] = useState('');
  const s = useSave();
  useEffect(() => {
    if (current.data) setText(current.data.url ?? '');
  }, [current.data]);
  const put = (url: string | null) =>
    s.save(async () => {
      const r = await api.settings.setShareBaseUrl(url);
      current.set(r);
      setText(r.url ?? '');
      return r.url ? `Saved: links now start with ${r.url}.` : 'Cleared: links use the address this page is opened at.';
    });
  return (
    <SettingForm
      title="Share base URL"
      intro="The address share links start with. Requests for that host get share links only, so the app and its sign-in never live on the address you hand out. Empty: the address Coffer is reached at."
      save={s}
      ready={!!current.data}
      loadError={current.error}
      inline
      onSubmit={() => void put(text.trim() || null)}
      actions={
        current.data?.url && (
          <ActionButton busy={s.busy} onClick={() => void put(null)}>
            Clear
          </ActionButton>
        )
      }
    >
      <Field label="Share base URL">
        <input type="url" placeholder="https://share.example.com" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
    </SettingForm>
  );
}

function KnownProxies() {
  const current = useLoad(api.settings.knownProxies);
  const [text, setText] = useState('');
  const s = useSave();
  useEffect(() => {
    if (current.data) setText(current.data.knownProxies.join('\n'));
  }, [current.data]);
  return (
    <SettingForm
      title="Known proxies"
      intro="Reverse proxies in front of Coffer, whose X-Forwarded-For and X-Forwarded-Proto headers are believed: an IP address, a CIDR range or a hostname per line (at most 100)."
      save={s}
      ready={!!current.data}
      loadError={current.error}
      onSubmit={() =>
        void s.save(async () => {
          const list = text
            .split(/[\n,]/)
            .map((l) => l.trim())
            .filter(Boolean);
          const r = await api.settings.setKnownProxies(list);
          setText(r.knownProxies.join('\n'));
          return (
            <>
              Saved ({plural(r.knownProxies.length, 'entry', 'entries')}).{' '}
              {r.restartRequired && (
                <strong>
                  Restart Coffer for it to take effect (<code>sudo systemctl restart coffer</code>).
                </strong>
              )}
            </>
          );
        })
      }
    >
      <Field label="Known proxies">
        <textarea
          rows={4}
          spellcheck={false}
          placeholder={'10.0.0.2\n192.168.1.0/24'}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </Field>
    </SettingForm>
  );
}

function DocumentServer() {
  const current = useLoad(api.settings.docserver);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const s = useSave();
  useEffect(() => {
    if (current.data) setUrl(current.data.url);
  }, [current.data]);
  const put = (body: { url: string | null; jwtSecret: string | null }) =>
    s.save(async () => {
      const r = await api.settings.setDocserver(body);
      current.set(r);
      setSecret('');
      return r.url ? `Saved: documents open in ${r.url}.` : 'Turned off: office documents are downloaded instead of edited in place.';
    });
  const on = current.data?.jwtSecretSet ?? false;
  return (
    <SettingForm
      title="Document server"
      intro={`An external document server (such as ONLYOFFICE Docs) edits office documents in the browser. ${on ? 'It is on.' : 'It is off.'} Both the URL and its JWT secret are needed; the secret is never shown again.`}
      save={s}
      ready={!!current.data}
      loadError={current.error}
      onSubmit={() => void put({ url: url.trim(), jwtSecret: secret })}
      actions={
        on && (
          <ActionButton busy={s.busy} onClick={() => void put({ url: null, jwtSecret: null })}>
            Turn off
          </ActionButton>
        )
      }
    >
      <Field label="Document server URL">
        <input type="url" placeholder="https://docs.example.com" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <Field
        label="Document server secret"
        hint={on ? 'A secret is set. Type it again (or a new one) to save a change.' : 'The JWT secret configured in the document server.'}
      >
        <input type="password" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
      </Field>
    </SettingForm>
  );
}

/** WebDAV with account passwords (issue 22): off by default, app passwords only. */
function WebdavAccountPasswords() {
  const current = useLoad(api.settings.davAccountPasswords);
  if (!current.data) return null;
  return (
    <Toggle
      label="Account passwords for WebDAV"
      value={current.data.enabled}
      description="Drives and apps connected over WebDAV may also sign in with a login's own password, when it has no two-step verification. Off: app passwords only (Settings → App passwords), which can be revoked one device at a time."
      put={async (on) => (await api.settings.setDavAccountPasswords(on)).enabled}
    />
  );
}

/** Content search (docs/search.md): the switch, what it costs in one sentence, and how far indexing has come. */
function ContentSearch() {
  // Polled while the page is open, so a backfill's progress moves without a reload.
  const current = useLoad(api.settings.contentSearch, { everyMs: 3000 });
  const c = current.data;
  return (
    <Section
      title="Content search"
      intro="Search finds files by the words inside them, not only by name. Each account can opt out in Settings."
    >
      {c && (
        <Toggle
          label="Search inside documents"
          value={c.enabled}
          description={
            <>
              Words from file contents are kept in the database without encryption; the files themselves stay encrypted. Turning this off
              deletes those words. Reads text, PDF, Word, Excel, PowerPoint and OpenDocument files.
            </>
          }
          put={async (on) => {
            const r = await api.settings.setContentSearch(on);
            current.set(r);
            return r.enabled;
          }}
        />
      )}
      {c?.enabled && (
        <p class="muted small" role="status">
          {c.pending > 0
            ? `Indexing: ${plural(c.indexed, 'file')} done, ${c.pending} to go.`
            : `Up to date: ${plural(c.indexed, 'file')} indexed, ${formatSize(c.textBytes)} of text.`}
        </p>
      )}
      {current.error && <FormError message={current.error} />}
    </Section>
  );
}

function PeopleSharing() {
  const current = useLoad(api.settings.peopleSharing);
  if (!current.data) return null;
  return (
    <Toggle
      label="Sharing with people"
      value={current.data.enabled}
      description="Owners may share files and folders with other accounts of this Coffer, as viewers or editors. Off: nothing new can be shared, and what is already shared stops working (members are told why) until it is turned back on."
      put={async (on) => (await api.settings.setPeopleSharing(on)).enabled}
    />
  );
}

/** File versions: on or off, and how long and how many are kept. */
function FileVersions() {
  const current = useLoad(api.settings.versions);
  const [days, setDays] = useState('');
  const [perFile, setPerFile] = useState('');
  const s = useSave();
  const loaded = current.data;
  // Seeded when the saved values change, not on every reload (a toggle, a refresh): typing in progress stays.
  useEffect(() => {
    if (!loaded) return;
    setDays(String(loaded.retentionDays));
    setPerFile(String(loaded.maxPerFile));
  }, [loaded?.retentionDays, loaded?.maxPerFile]);
  if (!current.data) return <Outcome error={current.error} saved={null} />;
  // The server's own ranges, checked first so the message names the field.
  const whole = (text: string, what: string, max: number) => {
    const n = Number(text.trim());
    if (!/^\d+$/.test(text.trim())) throw new Error(`${what} must be a whole number.`);
    if (n < 1 || n > max) throw new Error(`${what} must be between 1 and ${max.toLocaleString()}.`);
    return n;
  };
  return (
    <SettingForm
      title="File versions"
      intro="When a file is replaced, saved over WebDAV or edited, what it held before is kept as a version its owner can download or restore. Versions count against storage, and the oldest give way when an upload needs room."
      save={s}
      ready
      inline
      onSubmit={() =>
        void s.save(async () => {
          const r = await api.settings.setVersions({
            retentionDays: whole(days, 'Days to keep versions', 3650),
            maxPerFile: whole(perFile, 'Versions per file', 1000),
          });
          current.set(r);
          return `Saved: daily versions for ${plural(r.retentionDays, 'day')}, at most ${r.maxPerFile} per file.`;
        })
      }
      before={
        <Toggle
          label="Keep versions"
          value={current.data.enabled}
          description="Off: an overwrite replaces the file for good, as without versions. Versions kept so far stay until retention removes them."
          put={async (on) => {
            const r = await api.settings.setVersions({ enabled: on });
            current.set(r);
            return r.enabled;
          }}
        />
      }
    >
      <Field
        label="Days to keep versions"
        hint="Every version of the last hour, one an hour for a day, then one a day for this many days (1 to 3650)."
      >
        <input inputMode="numeric" required value={days} onInput={(e) => setDays(e.currentTarget.value)} />
      </Field>
      <Field label="Versions per file" hint="The oldest go first past this many (1 to 1000).">
        <input inputMode="numeric" required value={perFile} onInput={(e) => setPerFile(e.currentTarget.value)} />
      </Field>
    </SettingForm>
  );
}

/** The instance settings, each saved on its own with the server's validation. */
export function Instance() {
  const i = instance.value;
  if (!i) return null;
  const others = i.additionalUsers ?? 0;
  return (
    <>
      <Section title="Access" intro="Each switch saves as soon as it is changed.">
        <Toggle
          label="Allow sign-up"
          value={i.signupEnabled}
          description={
            <>
              Anyone who can reach this Coffer may create an account at <code>/signup</code>. There {others === 1 ? 'is' : 'are'}{' '}
              {plural(i.totalUsers ?? 1, 'login')} now (you and {plural(others, 'other')}, sub-users included).
            </>
          }
          put={async (on) => (await api.settings.setSignup(on)).signupEnabled}
        />
        <Toggle
          label="Hide file extensions"
          value={i.hideFileExtensions}
          description="Names show without their extension (report instead of report.pdf) in the file manager and when renaming; the icon still shows the kind."
          put={async (on) => (await api.settings.setHideFileExtensions(on)).hideFileExtensions}
        />
        <Toggle
          label="Allow password change"
          value={i.allowPasswordChange}
          description="Users may change their own password in Settings. Off: only you can set passwords, from a terminal (coffer users reset-password)."
          put={async (on) => (await api.settings.setAllowPasswordChange(on)).allowPasswordChange}
        />
        <Toggle
          label="Desktop-only access"
          value={i.desktopOnlyAccess}
          description={
            <>
              Only the Coffer desktop app may use this instance; share links stay open.{' '}
              <strong>This blocks this web app too, this page included</strong>: to turn it off again you need the desktop app or a terminal
              (<code>coffer settings set desktopOnlyAccess false</code>).
            </>
          }
          confirm={(on) =>
            on
              ? confirmDialog({
                  title: 'Turn on desktop-only access?',
                  message:
                    'Every browser, yours included, is locked out of this web app at once; only the desktop app keeps working. To undo it you need the desktop app or a terminal on the server: coffer settings set desktopOnlyAccess false',
                  confirm: 'Turn on desktop-only access',
                  danger: true,
                })
              : Promise.resolve(true)
          }
          put={async (on) => (await api.settings.setDesktopOnlyAccess(on)).desktopOnlyAccess}
        />
        <WebdavAccountPasswords />
        <PeopleSharing />
      </Section>
      <MaxUpload />
      <FileVersions />
      <ShareBaseUrl />
      <KnownProxies />
      <DocumentServer />
      <ContentSearch />
    </>
  );
}
