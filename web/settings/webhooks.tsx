import { useRef, useState } from 'preact/hooks';
import { CHANGE_EVENTS, OTHER_EVENTS, type Webhook, type WebhookDelivery, type WebhookEvent } from '../../src/contract/webhooks.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { pickFolder } from '../files/folder-picker.tsx';
import { copyText } from '../ui/copy.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { Field, FormError, SubmitButton } from '../ui/form.tsx';
import { LoadError, Section, TableWrap } from '../ui/page.tsx';

type Scope = 'account' | 'instance';
const client = (scope: Scope) => (scope === 'account' ? api.webhooks : api.instanceWebhooks);

const EVENT_LABELS: Record<WebhookEvent, string> = {
  'item.created': 'Folder or file created',
  'item.uploaded': 'File uploaded',
  'item.replaced': 'File replaced',
  'item.renamed': 'Renamed',
  'item.moved': 'Moved',
  'item.trashed': 'Moved to trash',
  'item.restored': 'Restored from trash',
  'item.purged': 'Deleted permanently',
  'item.copied': 'Copied',
  'item.version_restored': 'Older version restored',
  'link.created': 'Share link created',
  'link.removed': 'Share link removed',
  'member.added': 'Shared with a person',
  'member.removed': 'Person removed from a share',
  'item.dropped': 'File dropped through a link',
  'item.touched': 'Modified time set',
  'share.link_opened': 'Share link opened',
  'account.signed_in': 'Signed in',
  'backup.failed': 'Scheduled backup failed',
};

/** The secret just made: shown once, with a way to copy it. */
function NewSecret({ url, secret, done }: { url: string; secret: string; done: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <div class="new-app-password" role="status">
      <p>
        <strong>Signing secret for {url}.</strong> Give it to the receiver to check each request's <code>webhook-signature</code>. It is
        shown only now: rotate it to get a new one.
      </p>
      <Field label="Signing secret">
        <input ref={field} class="secret" type="text" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="form-actions">
        <button type="button" class="button" onClick={() => copyText(secret, 'Secret copied', field.current)}>
          Copy
        </button>
        <button type="button" class="button primary" onClick={done}>
          Done
        </button>
      </div>
    </div>
  );
}

function EventBoxes({ scope, chosen, set }: { scope: Scope; chosen: Set<WebhookEvent>; set: (next: Set<WebhookEvent>) => void }) {
  const box = (event: WebhookEvent) => (
    <div key={event} class="permission">
      <input
        type="checkbox"
        id={`event-${event}`}
        checked={chosen.has(event)}
        onChange={(e) => {
          const next = new Set(chosen);
          if (e.currentTarget.checked) next.add(event);
          else next.delete(event);
          set(next);
        }}
      />
      <span>
        <label for={`event-${event}`}>{EVENT_LABELS[event]}</label>
        <small class="muted">
          <code>{event}</code>
        </small>
      </span>
    </div>
  );
  // A failed backup concerns the whole instance: only its hooks are told.
  const others = OTHER_EVENTS.filter((e) => scope === 'instance' || e !== 'backup.failed');
  return (
    <fieldset class="permissions webhook-events">
      <legend>Events</legend>
      <div class="webhook-event-columns">
        <div>{CHANGE_EVENTS.map(box)}</div>
        <div>{others.map(box)}</div>
      </div>
    </fieldset>
  );
}

function AddForm({ scope, created }: { scope: Scope; created: (hook: Webhook, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState(new Set<WebhookEvent>(['item.uploaded']));
  const [folder, setFolder] = useState<{ id: string; name: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      noValidate
      class="form webhook-form"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!/^https?:\/\/./i.test(url.trim())) return setError('Give the receiver’s address, starting with https:// or http://.');
        if (events.size === 0) return setError('Choose at least one event.');
        setBusy(true);
        setError(null);
        try {
          const order = [...CHANGE_EVENTS, ...OTHER_EVENTS].filter((x) => events.has(x));
          const answer = await client(scope).create({ url: url.trim(), events: order, folderId: folder?.id ?? null });
          setUrl('');
          setFolder(null);
          created(answer.webhook, answer.secret);
        } catch (err) {
          setError((err as Error).message);
        }
        setBusy(false);
      }}
    >
      <Field label="Receiver URL" hint="Coffer posts each event there, signed with the secret shown after you add it.">
        <input type="url" inputMode="url" maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <EventBoxes scope={scope} chosen={events} set={setEvents} />
      {scope === 'account' && (
        <fieldset class="permissions">
          <legend>Folder</legend>
          <div class="form-actions">
            <span class="muted">{folder ? `Only changes in “${folder.name}”` : 'Changes anywhere in your files'}</span>
            <button
              type="button"
              class="button small"
              onClick={async () => {
                const target = await pickFolder({ title: 'Only changes in this folder', confirm: 'Choose this folder', start: null });
                if (target) setFolder(target.id === null ? null : { id: target.id, name: target.name });
              }}
            >
              Choose folder
            </button>
            {folder && (
              <button type="button" class="button small" onClick={() => setFolder(null)}>
                Any folder
              </button>
            )}
          </div>
        </fieldset>
      )}
      <FormError message={error} />
      <div class="form-actions">
        <SubmitButton busy={busy}>Add webhook</SubmitButton>
      </div>
    </form>
  );
}

const statusText = (d: WebhookDelivery) =>
  d.status === 'succeeded' ? 'Delivered' : d.status === 'failed' ? 'Failed' : d.attempts === 0 ? 'Queued' : 'Retrying';

function Deliveries({ scope, hook }: { scope: Scope; hook: Webhook }) {
  const log = useLoad(() => client(scope).deliveries(hook.id), { everyMs: 5000 });
  const redeliver = async (d: WebhookDelivery) => {
    try {
      await client(scope).redeliver(hook.id, d.id);
      toast('Sent again');
      await log.reload();
    } catch (err) {
      toastError(err);
    }
  };
  if (log.error) return <LoadError message={log.error} retry={log.reload} />;
  const rows = log.data?.deliveries ?? [];
  if (log.data && rows.length === 0) return <p class="muted small">No deliveries yet. Send a test event to try the receiver.</p>;
  return (
    <TableWrap label={`Deliveries to ${hook.url}`}>
      <table class="table webhook-deliveries">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Took</th>
            <th scope="col">Response</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id}>
              <td title={exactDate(d.attemptedAt ?? d.createdAt)}>{formatDate(d.attemptedAt ?? d.createdAt)}</td>
              <td>
                <code>{d.type}</code>
              </td>
              <td>
                <span class={`pill ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'warn' : ''}`}>{statusText(d)}</span>{' '}
                {d.responseStatus !== null && <span class="muted small">HTTP {d.responseStatus}</span>}
                {d.attempts > 1 && <span class="muted small"> · {d.attempts} tries</span>}
              </td>
              <td class="num">{d.durationMs === null ? '–' : `${d.durationMs} ms`}</td>
              <td class="webhook-response">
                {d.error && <span>{d.error}</span>}
                {d.response && <code class="small">{d.response.slice(0, 200)}</code>}
              </td>
              <td>
                <button
                  type="button"
                  class="button small"
                  aria-label={`Redeliver ${d.type} of ${formatDate(d.createdAt)}`}
                  onClick={() => redeliver(d)}
                >
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function HookEntry({ scope, hook, changed, secret }: { scope: Scope; hook: Webhook; changed: () => void; secret: (s: string) => void }) {
  const [open, setOpen] = useState(false);
  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      toast(done);
    } catch (err) {
      toastError(err);
    }
    changed();
  };
  const remove = async () => {
    const ok = await confirmDialog({
      title: 'Delete this webhook?',
      message: `Coffer stops sending to ${hook.url} and forgets its delivery log.`,
      confirm: 'Delete',
      danger: true,
    });
    if (ok) await act(() => client(scope).remove(hook.id), 'Webhook deleted');
  };
  const rotate = async () => {
    const ok = await confirmDialog({
      title: 'Rotate the signing secret?',
      message: 'The current secret stops signing at once: give the new one to the receiver.',
      confirm: 'Rotate',
    });
    if (!ok) return;
    try {
      secret((await client(scope).rotateSecret(hook.id)).secret);
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <li class="entry account">
      <div class="entry-row">
        <div class="entry-main">
          <span class="entry-title">
            <span class="webhook-url">{hook.url}</span>
            <span class={`pill ${hook.enabled ? 'ok' : 'warn'}`}>{hook.enabled ? 'Enabled' : 'Disabled'}</span>
          </span>
          <span class="muted small">
            {hook.events.length === 1 ? hook.events[0] : `${hook.events.length} events`}
            {hook.folderId && ' · one folder'} ·{' '}
            <span title={exactDate(hook.createdAt)}>added {formatDate(hook.createdAt).toLowerCase()}</span>
          </span>
          {hook.disabledReason && <span class="small">{hook.disabledReason}. Enable it again once the receiver answers.</span>}
          {!hook.disabledReason && hook.failingSince && (
            <span class="small">
              Failing since {formatDate(hook.failingSince).toLowerCase()}: it is disabled after 24 hours of failures.
            </span>
          )}
        </div>
        <div class="entry-actions">
          <button type="button" class="button small" onClick={() => act(() => client(scope).test(hook.id), 'Test event queued')}>
            Send test event
          </button>
          <button type="button" class="button small" aria-expanded={open} onClick={() => setOpen(!open)}>
            Deliveries
          </button>
          <button
            type="button"
            class="button small"
            onClick={() =>
              act(() => client(scope).update(hook.id, { enabled: !hook.enabled }), hook.enabled ? 'Webhook disabled' : 'Webhook enabled')
            }
          >
            {hook.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" class="button small" onClick={rotate}>
            Rotate secret
          </button>
          <button type="button" class="button small danger-ghost" aria-label={`Delete webhook to ${hook.url}`} onClick={remove}>
            Delete
          </button>
        </div>
      </div>
      {open && <Deliveries scope={scope} hook={hook} />}
    </li>
  );
}

/** Webhooks: the account's (Settings, its owner) or the instance's (Admin); each secret shown once. */
export function Webhooks({ scope }: { scope: Scope }) {
  const list = useLoad(() => client(scope).list());
  const [shown, setShown] = useState<{ url: string; secret: string } | null>(null);
  const [adding, setAdding] = useState(false);
  const hooks = list.data?.webhooks ?? [];
  return (
    <Section
      title={scope === 'account' ? 'Webhooks' : 'Instance webhooks'}
      intro={
        scope === 'account'
          ? 'Coffer tells a web address you choose when something happens in your files: a script, a chat bot or an automation. Each request is signed (Standard Webhooks), failed ones are retried for 24 hours.'
          : 'Instance webhooks hear every account’s changes, sign-ins and failed backups. Each request is signed (Standard Webhooks), failed ones are retried for 24 hours.'
      }
    >
      {shown ? (
        <NewSecret url={shown.url} secret={shown.secret} done={() => setShown(null)} />
      ) : adding ? (
        <AddForm
          scope={scope}
          created={(hook, secret) => {
            setAdding(false);
            setShown({ url: hook.url, secret });
            void list.reload();
          }}
        />
      ) : (
        <div class="form-actions">
          <button type="button" class="button primary" onClick={() => setAdding(true)}>
            Add webhook
          </button>
        </div>
      )}
      {list.error && <LoadError message={list.error} retry={list.reload} />}
      {list.data && hooks.length === 0 && <p class="muted">No webhooks yet.</p>}
      {hooks.length > 0 && (
        <ul class="entries" aria-label="Webhooks">
          {hooks.map((h) => (
            <HookEntry
              key={h.id}
              scope={scope}
              hook={h}
              changed={() => void list.reload()}
              secret={(secret) => setShown({ url: h.url, secret })}
            />
          ))}
        </ul>
      )}
    </Section>
  );
}
