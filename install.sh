#!/bin/sh
# Installs Coffer as a systemd service: the executable, a system user, a data directory, an
# environment file and a unit. Safe to re-run: it upgrades the executable and keeps data and settings.
set -eu

BINARY="${COFFER_BINARY:-}"
PREFIX="${COFFER_PREFIX:-/usr/local}"
DATA_DIR="${COFFER_DATA_DIR:-/var/lib/coffer}"
CONFIG_DIR="${COFFER_CONFIG_DIR:-/etc/coffer}"
SERVICE_USER="${COFFER_USER:-coffer}"
PORT="${PORT:-3000}"
HOST="${HOST:-0.0.0.0}"
ROOT="${COFFER_ROOT:-${DESTDIR:-}}"
UNIT_DIR="${COFFER_UNIT_DIR:-/etc/systemd/system}"
BACKUP_DIR="${COFFER_BACKUP_DIR:-/var/backups/coffer}"
ADMIN_EMAIL="${COFFER_ADMIN_EMAIL:-}"
DATA_DIR_GIVEN=0
BACKUP_DIR_GIVEN=0
LOW_PORTS=0
START=1
UNINSTALL=0
PURGE=0
SYSTEMD=1

usage() {
  cat <<USAGE
Usage: install.sh [options]

Installs the Coffer executable, creates the '$SERVICE_USER' system user and the data directory, writes
$CONFIG_DIR/coffer.env and a systemd unit, then enables and starts coffer.service.
Re-running upgrades the executable and restarts the service; data, secrets and coffer.env are kept.

Options (each also settable by the environment variable in brackets):
  --binary PATH      the coffer executable to install [COFFER_BINARY]
                     (default: ./dist/coffer, else ./coffer beside this script)
  --prefix DIR       install the executable into DIR/bin [COFFER_PREFIX] (default /usr/local)
  --data-dir DIR     database, secrets and blobs [COFFER_DATA_DIR] (default /var/lib/coffer)
  --config-dir DIR   where coffer.env lives [COFFER_CONFIG_DIR] (default /etc/coffer)
  --user NAME        system user the service runs as [COFFER_USER] (default coffer)
  --port N           port to listen on, written to coffer.env on first install [PORT] (default 3000)
  --host ADDR        address to bind, written to coffer.env on first install [HOST] (default 0.0.0.0)
  --unit-dir DIR     where the systemd unit goes [COFFER_UNIT_DIR] (default /etc/systemd/system)
  --backup-dir DIR   created for 'coffer backup --full', owned by the service user
                     [COFFER_BACKUP_DIR] (default /var/backups/coffer; kept by --purge)
  --email ADDR       the first admin's email, used in the closing hint [COFFER_ADMIN_EMAIL]
  --bind-low-ports   let the service listen on ports below 1024 (e.g. --port 443 with --tls-cert):
                     grants it CAP_NET_BIND_SERVICE and nothing else
  --root DIR         install into DIR as if it were / (packaging, tests) [COFFER_ROOT or DESTDIR];
                     paths inside the unit stay as if installed at /; implies --no-systemd
  --no-systemd       write the files only: no system user, no systemctl, no root needed
  --no-start         install and enable, but do not start or restart the service
  --uninstall        stop and remove the service, unit and executable; keeps data and coffer.env
  --purge            with --uninstall: also delete the data directory (every file!), coffer.env,
                     local unit edits (coffer.service.d) and the system user; backups are kept
  -h, --help         this text

After installing:
  systemctl status coffer          is it running?
  journalctl -u coffer -f          its logs (JSON, one line per request)
  systemctl edit coffer            change the unit: your edits go in a drop-in that upgrades keep
  sudo -u $SERVICE_USER coffer users create you@example.com --admin --data-dir $DATA_DIR
                                   create the first (admin) account from the shell
  sudo -u $SERVICE_USER coffer backup --full $BACKUP_DIR/coffer-\$(date +%F).tar --data-dir $DATA_DIR
                                   back up everything (database, secrets.json, files) while it runs
USAGE
}

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

need_cmd() {
  command -v "$1" >/dev/null 2>&1 || fail "needs '$1', which is not installed"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --binary) [ $# -ge 2 ] || fail "--binary needs a path"; BINARY="$2"; shift 2 ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; PREFIX="$2"; shift 2 ;;
    --data-dir) [ $# -ge 2 ] || fail "--data-dir needs a directory"; DATA_DIR="$2"; DATA_DIR_GIVEN=1; shift 2 ;;
    --config-dir) [ $# -ge 2 ] || fail "--config-dir needs a directory"; CONFIG_DIR="$2"; shift 2 ;;
    --user) [ $# -ge 2 ] || fail "--user needs a name"; SERVICE_USER="$2"; shift 2 ;;
    --port) [ $# -ge 2 ] || fail "--port needs a number"; PORT="$2"; shift 2 ;;
    --host) [ $# -ge 2 ] || fail "--host needs an address"; HOST="$2"; shift 2 ;;
    --unit-dir) [ $# -ge 2 ] || fail "--unit-dir needs a directory"; UNIT_DIR="$2"; shift 2 ;;
    --backup-dir) [ $# -ge 2 ] || fail "--backup-dir needs a directory"; BACKUP_DIR="$2"; BACKUP_DIR_GIVEN=1; shift 2 ;;
    --email) [ $# -ge 2 ] || fail "--email needs an address"; ADMIN_EMAIL="$2"; shift 2 ;;
    --bind-low-ports) LOW_PORTS=1; shift ;;
    --root) [ $# -ge 2 ] || fail "--root needs a directory"; ROOT="$2"; shift 2 ;;
    --no-systemd) SYSTEMD=0; shift ;;
    --no-start) START=0; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; fail "unknown option: $1" ;;
  esac
done

case "$PORT" in
  ''|*[!0-9]*) fail "--port must be a number, got '$PORT'" ;;
esac
[ "$PORT" -ge 1 ] && [ "$PORT" -le 65535 ] || fail "--port must be between 1 and 65535, got $PORT"
case "$DATA_DIR" in /*) ;; *) fail "--data-dir must be an absolute path, got '$DATA_DIR'" ;; esac

[ "$PURGE" -eq 0 ] || [ "$UNINSTALL" -eq 1 ] || fail "--purge only goes with --uninstall"
case "$PREFIX" in /*) ;; *) fail "--prefix must be an absolute path, got '$PREFIX'" ;; esac
case "$CONFIG_DIR" in /*) ;; *) fail "--config-dir must be an absolute path, got '$CONFIG_DIR'" ;; esac
case "$UNIT_DIR" in /*) ;; *) fail "--unit-dir must be an absolute path, got '$UNIT_DIR'" ;; esac
case "$BACKUP_DIR" in /*) ;; *) fail "--backup-dir must be an absolute path, got '$BACKUP_DIR'" ;; esac
if [ "$PORT" -lt 1024 ] && [ "$LOW_PORTS" -eq 0 ] && [ "$UNINSTALL" -eq 0 ]; then
  fail "port $PORT is below 1024: add --bind-low-ports to let the service bind it, or use a port above 1023 behind a reverse proxy"
fi

UNIT="$ROOT$UNIT_DIR/coffer.service"
BIN_PATH="$PREFIX/bin/coffer"
if [ -n "$ROOT" ]; then
  SYSTEMD=0
fi
[ "$SYSTEMD" -eq 1 ] || START=0

warn() {
  echo "install.sh: warning: $*" >&2
}

# A path as a unit file reads it: % doubled (systemd expands %-specifiers), and where systemd would split it (a blank)
# or read a quote or backslash, one double-quoted word with \ and " escaped.
unit_word() {
  escaped=$(printf '%s' "$1" | sed -e 's/%/%%/g')
  case "$1" in
    *[!A-Za-z0-9/._+@:,=%-]*) printf '"%s"' "$(printf '%s' "$escaped" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')" ;;
    *) printf '%s' "$escaped" ;;
  esac
}

# A value of the kept coffer.env (the last line setting it), without the quotes it may be written in.
env_value() {
  sed -n "s/^$1=//p" "$ENV_FILE" | tail -n 1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\\(.*\\)'\$/\\1/"
}

# An existing coffer.env is kept and the service reads its directories from it: the unit, the directories made and
# --purge follow it, not this run's defaults (an upgrade without --data-dir would otherwise leave the data read-only).
ENV_FILE="$ROOT$CONFIG_DIR/coffer.env"
if [ -f "$ENV_FILE" ]; then
  KEPT_DATA_DIR=$(env_value COFFER_DATA_DIR)
  if [ -n "$KEPT_DATA_DIR" ] && [ "$KEPT_DATA_DIR" != "$DATA_DIR" ]; then
    [ "$DATA_DIR_GIVEN" -eq 0 ] || warn "--data-dir $DATA_DIR ignored: $CONFIG_DIR/coffer.env keeps COFFER_DATA_DIR=$KEPT_DATA_DIR (edit it there to move the data)"
    DATA_DIR=$KEPT_DATA_DIR
  fi
  KEPT_BACKUP_DIR=$(env_value BACKUP_DIR)
  if [ -n "$KEPT_BACKUP_DIR" ] && [ "$KEPT_BACKUP_DIR" != "$BACKUP_DIR" ]; then
    [ "$BACKUP_DIR_GIVEN" -eq 0 ] || warn "--backup-dir $BACKUP_DIR ignored: $CONFIG_DIR/coffer.env keeps BACKUP_DIR=$KEPT_BACKUP_DIR (edit it there to change it)"
    BACKUP_DIR=$KEPT_BACKUP_DIR
  fi
fi

# Checked before anything changes: without a running systemd, systemctl would fail halfway through.
if [ "$SYSTEMD" -eq 1 ]; then
  [ -d "${COFFER_SYSTEMD_RUN_DIR:-/run/systemd/system}" ] || fail "systemd is not running on this machine (a container, WSL or another init?): \
pass --no-systemd to install the files only, then start 'coffer serve' with your own service manager"
  need_cmd systemctl
fi
if [ "$SYSTEMD" -eq 1 ] && [ "$(id -u)" -ne 0 ]; then
  fail "run as root (sudo sh install.sh), or pass --root DIR or --no-systemd to only write the files"
fi

if [ "$UNINSTALL" -eq 1 ]; then
  # Each step goes on when what it removes is already gone (or fails), so a half-removed install finishes.
  set +e
  if [ "$SYSTEMD" -eq 1 ]; then
    systemctl disable --now coffer.service >/dev/null 2>&1
  fi
  rm -f "$UNIT" "$ROOT$BIN_PATH" "$ROOT$BIN_PATH.new" || warn "could not remove $UNIT or $ROOT$BIN_PATH"
  if [ "$PURGE" -eq 1 ]; then
    rm -rf "$UNIT.d" || warn "could not remove $UNIT.d"
  fi
  if [ "$SYSTEMD" -eq 1 ]; then
    systemctl daemon-reload || warn "systemctl daemon-reload failed; run it yourself"
  fi
  if [ "$PURGE" -eq 1 ]; then
    rm -rf "$ROOT$DATA_DIR" || warn "could not remove $ROOT$DATA_DIR"
    rm -f "$ROOT$CONFIG_DIR/coffer.env" || warn "could not remove $ROOT$CONFIG_DIR/coffer.env"
    rmdir "$ROOT$CONFIG_DIR" 2>/dev/null
    if [ "$SYSTEMD" -eq 1 ] && id "$SERVICE_USER" >/dev/null 2>&1; then
      userdel "$SERVICE_USER" || warn "could not delete the user $SERVICE_USER (still running processes?)"
    fi
    kept=""
    [ -d "$ROOT$BACKUP_DIR" ] && kept=" Kept your backups in $ROOT$BACKUP_DIR."
    echo "Coffer uninstalled and purged: $ROOT$DATA_DIR and $ROOT$CONFIG_DIR/coffer.env are gone.$kept"
  else
    echo "Coffer uninstalled. Kept: $ROOT$DATA_DIR (your files and secrets) and $ROOT$CONFIG_DIR/coffer.env (remove them with --uninstall --purge)."
  fi
  exit 0
fi

if [ -z "$BINARY" ]; then
  here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
  if [ -x "$here/dist/coffer" ]; then BINARY="$here/dist/coffer"
  elif [ -x "$here/coffer" ]; then BINARY="$here/coffer"
  else fail "no executable found: run 'npm run build' first, or pass --binary PATH"
  fi
fi
[ -f "$BINARY" ] || fail "executable not found: $BINARY"
[ -x "$BINARY" ] || fail "not executable: $BINARY (chmod +x it)"
VERSION=$("$BINARY" --version 2>/dev/null) || fail "$BINARY does not run on this machine (wrong OS or CPU?)"

if [ "$SYSTEMD" -eq 1 ]; then
  if ! id "$SERVICE_USER" >/dev/null 2>&1; then
    need_cmd useradd
    useradd --system --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
    echo "created system user $SERVICE_USER"
  fi
fi

mkdir -p "$ROOT$PREFIX/bin" "$ROOT$UNIT_DIR" "$ROOT$CONFIG_DIR" "$ROOT$DATA_DIR" "$ROOT$BACKUP_DIR"
# Copy then rename, so a running service never sees a half-written executable.
cp "$BINARY" "$ROOT$BIN_PATH.new"
chmod 0755 "$ROOT$BIN_PATH.new"
mv -f "$ROOT$BIN_PATH.new" "$ROOT$BIN_PATH"
chmod 0700 "$ROOT$DATA_DIR" "$ROOT$BACKUP_DIR"
if [ "$SYSTEMD" -eq 1 ]; then
  chown "$SERVICE_USER:" "$ROOT$DATA_DIR" "$ROOT$BACKUP_DIR"
fi

if [ ! -f "$ENV_FILE" ]; then
  (umask 077 && : > "$ENV_FILE")
  cat > "$ENV_FILE" <<ENV
# Coffer settings; 'coffer serve --help' and the Configuration table of docs/configuration.md
# (installed in $PREFIX/share/doc/coffer) explain each one.
# Restart after editing: systemctl restart coffer
PORT=$PORT
HOST=$HOST
COFFER_DATA_DIR=$DATA_DIR
LOG_LEVEL=info
# Syslog priorities in front of each line: journalctl -u coffer -p err lists the errors.
LOG_FORMAT=journald
# COFFER_DEFAULT_STORAGE_LIMIT=50G
# TRASH_RETENTION_DAYS=30
# Libraries (docs/libraries.md):
# LIBRARY_RESCAN_MINUTES=60
# LIBRARY_WATCH=1
# AUDIT_RETENTION_DAYS=90
# CHANGES_RETENTION_DAYS=30
# METRICS_ALLOWED_IPS=127.0.0.1,::1,::ffff:127.0.0.1
# QUEUE_METRICS_INTERVAL_SECONDS=60
# UPDATE_FEED_URL=
# COFFER_WORKER_CONCURRENCY=2
# COFFER_GENERAL_RATE_LIMIT=10000
# COFFER_AUTH_RATE_LIMIT=25
# COFFER_UPLOAD_RATE_LIMIT=20000
# COFFER_MFA_RATE_LIMIT=5
# COFFER_BACKUP_CODES_RATE_LIMIT=3
# COFFER_PASSWORD_HASH_RATE_LIMIT=60
# COFFER_MEMBER_LOOKUP_RATE_LIMIT=30
# COFFER_IDLE_TIMEOUT_SECONDS=30
# COFFER_MAX_CONNECTIONS_PER_IP=64
# ZIP downloads made at once, on the instance and of one account (docs/memory.md):
# COFFER_MAX_ZIPS=4
# COFFER_MAX_ZIPS_PER_ACCOUNT=2
# COFFER_MIN_FREE_BYTES=512M
# TUS_EXPIRY_HOURS=24
# Webhooks (docs/webhooks.md): hosts allowed although they resolve to a private or loopback address, the receiver's time limit:
# WEBHOOK_ALLOWED_HOSTS=
# WEBHOOK_TIMEOUT_MS=10000
# Thumbnails (docs/thumbnails.md, "Thumbnails and photos"):
# THUMBNAIL_CONCURRENCY=1
# THUMBNAIL_MAX_PIXELS=100000000
# Videos get a first-frame thumbnail with ffmpeg (apt-get install ffmpeg), found on PATH or named here:
# FFMPEG_PATH=/usr/bin/ffmpeg
# Content search (docs/search.md, "Turning it on"): text kept per file, the largest file read, extraction threads:
# SEARCH_MAX_TEXT_BYTES=1M
# SEARCH_MAX_FILE_BYTES=100M
# SEARCH_WORKERS=1
# A map tile server for the photo viewer's place, e.g. https://tile.example.home/{z}/{x}/{y}.png (empty: no map, no request):
# MAP_TILE_URL=
# The address people open, e.g. https://files.example.home; passkeys are bound to its host (docs/accounts.md, "Passkeys"):
# COFFER_PUBLIC_URL=
# The document server (docs/documents.md, "Editing documents"):
# DOCSERVER_AUTOSAVE_INTERVAL_MS=300000
# DOCSERVER_BACKEND_URL=
# File contents in an S3 bucket instead of the data directory (docs/s3.md, "Storage on S3"):
# COFFER_STORAGE=s3
# S3_BUCKET=
# S3_ENDPOINT=
# S3_REGION=us-east-1
# S3_PREFIX=
# S3_ACCESS_KEY_ID=
# S3_SECRET_ACCESS_KEY=
# S3_FORCE_PATH_STYLE=
# S3_PART_SIZE=8M
# S3_TIMEOUT_SECONDS=30
# Backups that run themselves (docs/backup.md, "Scheduled backups"); off until BACKUP_SCHEDULE is set:
# BACKUP_SCHEDULE=daily 03:30
# BACKUP_KEEP=7
BACKUP_DIR=$BACKUP_DIR
# BACKUP_PASSPHRASE_FILE=$CONFIG_DIR/backup-passphrase
# BACKUP_S3_BUCKET=
# Continuous replication of the database (docs/replication.md); needs BACKUP_PASSPHRASE_FILE:
# REPLICATE_TO=s3://bucket/coffer-replica/
# REPLICATE_INTERVAL_MS=1000
# REPLICATE_RETENTION=7d
# REPLICATE_MAX_LAG_BYTES=1G
# Built-in HTTPS without a reverse proxy (both files readable by the service user):
# COFFER_TLS_CERT=/etc/coffer/tls/fullchain.pem
# COFFER_TLS_KEY=/etc/coffer/tls/privkey.pem
# The master key and token secret normally live in secrets.json; these override it:
# COFFER_MASTER_KEY=
# COFFER_MASTER_KEY_FILE=
# JWT_SECRET=
# Less memory for a little speed on hosts with 16 GiB or more (docs/memory.md, "Memory"):
# BUN_JSC_forceRAMSize=4294967296
# Single sign-on through an OpenID Connect provider (docs/sign-on.md, "Single sign-on"):
# OIDC_ISSUER_URL=https://auth.example.com/application/o/coffer/
# OIDC_CLIENT_ID=coffer
# OIDC_CLIENT_SECRET_FILE=$CONFIG_DIR/oidc-client-secret
# OIDC_PROVIDER_NAME=Authentik
# OIDC_CLIENT_SECRET=
# OIDC_REDIRECT_URL=
# OIDC_SCOPES=openid email profile
# OIDC_AUTO_CREATE=false
# OIDC_DISABLE_PASSWORD_LOGIN=false
# OIDC_ALLOW_HTTP=false
# Groups from the provider: the claim listing a person's groups, and whether unknown ones are created (docs/groups.md).
# OIDC_GROUPS_CLAIM=groups
# OIDC_GROUPS_CREATE=false
ENV
  [ "$SYSTEMD" -eq 1 ] && chown "root:$SERVICE_USER" "$ENV_FILE" && chmod 0640 "$ENV_FILE"
  echo "wrote $CONFIG_DIR/coffer.env"
else
  echo "kept existing $CONFIG_DIR/coffer.env"
fi

# The README, installed beside the executable, is what the unit's Documentation= points at; the parts of
# the documentation it links to go beside it in docs/ (replaced whole, so an upgrade leaves no stale part).
DOC_DIR="$PREFIX/share/doc/coffer"
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
DOC_LINE=""
if [ -f "$here/README.md" ]; then
  mkdir -p "$ROOT$DOC_DIR"
  cp "$here/README.md" "$ROOT$DOC_DIR/README.md"
  chmod 0644 "$ROOT$DOC_DIR/README.md"
  # A URI: blanks as %20 (then doubled, as every % of a unit).
  DOC_LINE="Documentation=file:$(printf '%s' "$DOC_DIR" | sed -e 's/%/%25/g' -e 's/ /%20/g' -e 's/%/%%/g')/README.md"
  if [ -d "$here/docs" ]; then
    rm -rf "$ROOT$DOC_DIR/docs"
    mkdir -p "$ROOT$DOC_DIR/docs"
    for part in "$here"/docs/*.md "$here"/docs/*.png; do
      [ -f "$part" ] || continue
      cp "$part" "$ROOT$DOC_DIR/docs/"
      chmod 0644 "$ROOT$DOC_DIR/docs/${part##*/}"
    done
  fi
fi

if [ "$LOW_PORTS" -eq 1 ]; then
  # The one capability it needs for ports below 1024; a private user namespace would void it.
  CAPABILITIES="CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE"
else
  CAPABILITIES="CapabilityBoundingSet=
AmbientCapabilities=
PrivateUsers=true"
fi

cat > "$UNIT.new" <<UNITFILE
# Written by install.sh, which rewrites it on upgrade: put local changes in a drop-in
# (systemctl edit coffer), which upgrades keep.
[Unit]
Description=Coffer file storage and sharing
$DOC_LINE
After=network-online.target
Wants=network-online.target

[Service]
Type=notify
NotifyAccess=main
User=$SERVICE_USER
Group=$SERVICE_USER
EnvironmentFile=$(printf '%s' "$CONFIG_DIR" | sed -e 's/%/%%/g')/coffer.env
ExecStart=$(unit_word "$BIN_PATH") serve
Restart=on-failure
RestartSec=5
# SIGTERM lets in-flight requests and the running job finish before exit.
KillSignal=SIGTERM
TimeoutStartSec=120
TimeoutStopSec=30
LimitNOFILE=65536
UMask=0077

# Hardening (systemd-analyze security coffer): it reads and writes only its data directory.
$CAPABILITIES
NoNewPrivileges=true
ProtectSystem=strict
# The backup directory too, for scheduled backups ("-": the service still starts when it was removed).
ReadWritePaths=$(unit_word "$DATA_DIR") $(unit_word "-$BACKUP_DIR")
ProtectHome=true
PrivateTmp=true
PrivateDevices=true
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
ProtectProc=invisible
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
RestrictNamespaces=true
RestrictRealtime=true
RestrictSUIDSGID=true
RemoveIPC=true
LockPersonality=true
# No MemoryDenyWriteExecute=: under it the runtime runs without its JIT (JavaScript about 10x slower) and cannot
# load the C library that tells systemd the server is ready, so start-up would time out.
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged
SystemCallErrorNumber=EPERM

[Install]
WantedBy=multi-user.target
UNITFILE
# World-readable like every unit (systemd warns about one it cannot show); it holds no secret.
chmod 0644 "$UNIT.new"
mv -f "$UNIT.new" "$UNIT"

echo "installed coffer $VERSION to $BIN_PATH"
if command -v systemd-analyze >/dev/null 2>&1 && [ -z "$ROOT" ]; then
  systemd-analyze verify "$UNIT" >/dev/null 2>&1 || echo "warning: systemd-analyze verify reports problems with $UNIT" >&2
fi
URL_PORT=$(sed -n 's/^PORT=//p' "$ENV_FILE" | tail -n 1)
SCHEME=http
grep -q '^COFFER_TLS_CERT=.' "$ENV_FILE" && SCHEME=https
URL="$SCHEME://$(hostname 2>/dev/null || echo localhost):${URL_PORT:-$PORT}"
if [ "$SYSTEMD" -eq 1 ]; then
  systemctl daemon-reload
  systemctl enable coffer.service >/dev/null
  if [ "$START" -eq 1 ]; then
    # Made now rather than by the first start, so the setup code of the first sign-up can be printed below.
    runuser -u "$SERVICE_USER" -- env COFFER_CONFIG="$ENV_FILE" "$BIN_PATH" init >/dev/null
    systemctl restart coffer.service
    echo "coffer.service is running: $URL"
    SETUP_CODE=$(runuser -u "$SERVICE_USER" -- env COFFER_CONFIG="$ENV_FILE" "$BIN_PATH" setup-code --json 2>/dev/null |
      sed -n 's/.*"setupCode": "\([^"]*\)".*/\1/p')
    if [ -n "$SETUP_CODE" ]; then
      echo "First run: open $URL and create the admin account with the setup code $SETUP_CODE"
      echo "  (sudo -u $SERVICE_USER coffer setup-code prints it again)"
    fi
  else
    echo "coffer.service is enabled; start it with: systemctl start coffer (it will listen on $URL)"
  fi
else
  echo "wrote $UNIT; once enabled and started it listens on $URL"
fi
COFFER_CMD="$BIN_PATH"
[ "$SYSTEMD" -eq 1 ] && COFFER_CMD="sudo -u $SERVICE_USER $BIN_PATH"
cat <<HINT

Next:
  create the first (admin) account: open $URL, or from the shell:
    $COFFER_CMD users create ${ADMIN_EMAIL:-you@example.com} --admin --data-dir $DATA_DIR
  back up everything while it runs (database, secrets.json, files):
    $COFFER_CMD backup --full $BACKUP_DIR/coffer-\$(date +%F).tar --data-dir $DATA_DIR
  change the unit with 'systemctl edit coffer' (a drop-in that upgrades keep), settings in $CONFIG_DIR/coffer.env
HINT
