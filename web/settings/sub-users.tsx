import { useState } from 'preact/hooks';
import { DISPLAY_NAME_MAX, PASSWORD } from '../../src/contract/limits.ts';
import type { Permission } from '../../src/contract/permissions.ts';
import { api } from '../api/index.ts';
import type { PermissionInfo, SubUser } from '../../src/contract/accounts.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog, Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { EmailInput, Field, FormError, PasswordInput } from '../ui/form.tsx';
import { LoadError, Section } from '../ui/page.tsx';

function PermissionBoxes({
  catalog,
  chosen,
  set,
}: {
  catalog: PermissionInfo[];
  chosen: Set<Permission>;
  set: (next: Set<Permission>) => void;
}) {
  return (
    <fieldset class="permissions">
      <legend>Permissions</legend>
      <p class="muted small">Without any, a sub-user can browse and search the files but not open or change them.</p>
      {catalog.map((p) => (
        <div key={p.key} class="permission">
          <input
            type="checkbox"
            id={`perm-${p.key}`}
            checked={chosen.has(p.key)}
            aria-describedby={`perm-${p.key}-about`}
            onChange={(e) => {
              const next = new Set(chosen);
              if (e.currentTarget.checked) next.add(p.key);
              else next.delete(p.key);
              set(next);
            }}
          />
          <span>
            <label for={`perm-${p.key}`}>{p.label}</label>
            <small id={`perm-${p.key}-about`} class="muted">
              {p.description}
            </small>
          </span>
        </div>
      ))}
    </fieldset>
  );
}

/** Keys in the catalog's order, as the server lists them. */
const ordered = (catalog: PermissionInfo[], chosen: ReadonlySet<Permission>) => catalog.map((p) => p.key).filter((k) => chosen.has(k));

function AddForm({ catalog, close }: { catalog: PermissionInfo[]; close: (created?: SubUser) => void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [chosen, setChosen] = useState(new Set<Permission>());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (!name.trim()) return setError('Name is required');
        if (password.length < PASSWORD.subUserMin) return setError(`Password must be at least ${PASSWORD.subUserMin} characters`);
        setBusy(true);
        setError(null);
        try {
          const r = await api.subUsers.create({ name: name.trim(), email: email.trim(), password, permissions: ordered(catalog, chosen) });
          close(r.subUser);
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        <Field label="Name">
          <input
            required
            maxLength={DISPLAY_NAME_MAX}
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            autofocus
          />
        </Field>
        <Field label="Email" hint="They sign in with this address.">
          <EmailInput autoComplete="off" value={email} onValue={setEmail} />
        </Field>
        <Field label="Password" hint={`At least ${PASSWORD.subUserMin} characters. Tell it to them; they can change it once signed in.`}>
          <PasswordInput purpose="new" min={PASSWORD.subUserMin} value={password} onValue={setPassword} />
        </Field>
        <PermissionBoxes catalog={catalog} chosen={chosen} set={setChosen} />
        <FormError message={error} />
      </div>
      <FormButtons submit="Create" busy={busy} cancel={() => close()} />
    </form>
  );
}

function EditForm({ sub, catalog, close }: { sub: SubUser; catalog: PermissionInfo[]; close: (saved?: SubUser) => void }) {
  const [chosen, setChosen] = useState(new Set(sub.permissions));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const r = await api.subUsers.setPermissions(sub.id, { permissions: ordered(catalog, chosen) });
          close(r.subUser);
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        <p class="notice">Changes take effect at once: {sub.name || sub.email}'s next action uses them, without signing in again.</p>
        <PermissionBoxes catalog={catalog} chosen={chosen} set={setChosen} />
        <FormError message={error} />
      </div>
      <FormButtons submit="Save" busy={busy} cancel={() => close()} />
    </form>
  );
}

/** Sub-users (owners only): extra logins on this account's files, each with its own permissions. */
export function SubUsers() {
  const list = useLoad(api.subUsers.list);
  const catalog = list.data?.availablePermissions ?? [];
  const labels = (keys: string[]) =>
    keys.length
      ? catalog
          .filter((p) => keys.includes(p.key))
          .map((p) => p.label)
          .join(', ')
      : 'Browse only';

  const add = async () => {
    const created = await openDialog<SubUser>((close) => (
      <Dialog title="Add sub-user" onClose={() => close()}>
        <AddForm catalog={catalog} close={close} />
      </Dialog>
    ));
    if (!created) return;
    toast(`${created.name} can now sign in as ${created.email}`);
    await list.reload();
  };

  const edit = async (sub: SubUser) => {
    const saved = await openDialog<SubUser>((close) => (
      <Dialog title={`Permissions of ${sub.name || sub.email}`} onClose={() => close()}>
        <EditForm sub={sub} catalog={catalog} close={close} />
      </Dialog>
    ));
    if (!saved) return;
    toast(`Saved. ${saved.name || saved.email} now has: ${labels(saved.permissions)}. It applies to their next action.`);
    await list.reload();
  };

  const remove = async (sub: SubUser) => {
    const ok = await confirmDialog({
      title: `Delete sub-user ${sub.name || sub.email}?`,
      message: `${sub.email} can no longer sign in, and is signed out everywhere now. Files they uploaded or changed stay with you.`,
      confirm: 'Delete sub-user',
      danger: true,
    });
    if (!ok) return;
    try {
      await api.subUsers.remove(sub.id);
      toast(`Deleted sub-user ${sub.email}`);
    } catch (err) {
      toastError(err);
    }
    await list.reload();
  };

  const subs = list.data?.subUsers ?? [];
  return (
    <Section
      title="Sub-users"
      intro="Extra logins on your files and storage: family, colleagues, a scanner or a backup script. Each has its own password, two-factor authentication and sessions, and only the permissions you give."
    >
      {list.error && <LoadError message={list.error} retry={list.reload} />}
      {list.data && (
        <>
          <div class="form-actions">
            <button type="button" class="button primary" onClick={add}>
              Add sub-user
            </button>
          </div>
          {subs.length === 0 ? (
            <p class="muted">No sub-users yet.</p>
          ) : (
            <ul class="entries" aria-label="Sub-users">
              {subs.map((s) => (
                <li key={s.id} class="entry">
                  <div class="entry-main">
                    <span class="entry-title">
                      {s.name || s.email}
                      {s.mfaEnabled && <span class="pill ok">Two-factor on</span>}
                    </span>
                    <span class="muted small">
                      {s.email} · <span title={exactDate(s.createdAt)}>added {formatDate(s.createdAt).toLowerCase()}</span>
                    </span>
                    <span class="small">May: {labels(s.permissions)}</span>
                  </div>
                  <div class="entry-actions">
                    <button
                      type="button"
                      class="button small"
                      aria-label={`Edit permissions of ${s.name || s.email}`}
                      onClick={() => edit(s)}
                    >
                      Edit permissions
                    </button>
                    <button
                      type="button"
                      class="button small danger-ghost"
                      aria-label={`Delete sub-user ${s.name || s.email}`}
                      onClick={() => remove(s)}
                    >
                      Delete
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Section>
  );
}
