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
  --root DIR         install into DIR as if it were / (packaging, tests) [COFFER_ROOT or DESTDIR];
                     paths inside the unit stay as if installed at /; implies --no-systemd
  --no-systemd       write the files only: no system user, no systemctl, no root needed
  --no-start         install and enable, but do not start or restart the service
  --uninstall        stop and remove the service, unit and executable; keeps data and coffer.env
  --purge            with --uninstall: also delete the data directory (every file!), coffer.env
                     and the system user
  -h, --help         this text

After installing:
  systemctl status coffer          is it running?
  journalctl -u coffer -f          its logs (JSON, one line per request)
  sudo -u $SERVICE_USER coffer users create --admin --data-dir $DATA_DIR
                                   create the first (admin) account from the shell
Back up $DATA_DIR/secrets.json: without its master key no stored file can be read.
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
    --data-dir) [ $# -ge 2 ] || fail "--data-dir needs a directory"; DATA_DIR="$2"; shift 2 ;;
    --config-dir) [ $# -ge 2 ] || fail "--config-dir needs a directory"; CONFIG_DIR="$2"; shift 2 ;;
    --user) [ $# -ge 2 ] || fail "--user needs a name"; SERVICE_USER="$2"; shift 2 ;;
    --port) [ $# -ge 2 ] || fail "--port needs a number"; PORT="$2"; shift 2 ;;
    --host) [ $# -ge 2 ] || fail "--host needs an address"; HOST="$2"; shift 2 ;;
    --unit-dir) [ $# -ge 2 ] || fail "--unit-dir needs a directory"; UNIT_DIR="$2"; shift 2 ;;
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

UNIT="$ROOT$UNIT_DIR/coffer.service"
BIN_PATH="$PREFIX/bin/coffer"
if [ -n "$ROOT" ]; then
  SYSTEMD=0
fi
[ "$SYSTEMD" -eq 1 ] || START=0

if [ "$SYSTEMD" -eq 1 ] && [ "$(id -u)" -ne 0 ]; then
  fail "run as root (sudo sh install.sh), or pass --root DIR or --no-systemd to only write the files"
fi

if [ "$UNINSTALL" -eq 1 ]; then
  if [ "$SYSTEMD" -eq 1 ]; then
    need_cmd systemctl
    systemctl disable --now coffer.service 2>/dev/null || true
  fi
  rm -f "$UNIT" "$ROOT$BIN_PATH"
  [ "$SYSTEMD" -eq 1 ] && systemctl daemon-reload
  if [ "$PURGE" -eq 1 ]; then
    rm -rf "$ROOT$DATA_DIR" "$ROOT$CONFIG_DIR/coffer.env"
    rmdir "$ROOT$CONFIG_DIR" 2>/dev/null || true
    if [ "$SYSTEMD" -eq 1 ] && id "$SERVICE_USER" >/dev/null 2>&1; then
      userdel "$SERVICE_USER" 2>/dev/null || true
    fi
    echo "Coffer uninstalled and purged: $ROOT$DATA_DIR and $ROOT$CONFIG_DIR/coffer.env are gone."
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
  need_cmd systemctl
  if ! id "$SERVICE_USER" >/dev/null 2>&1; then
    need_cmd useradd
    useradd --system --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
    echo "created system user $SERVICE_USER"
  fi
fi

mkdir -p "$ROOT$PREFIX/bin" "$ROOT$UNIT_DIR" "$ROOT$CONFIG_DIR" "$ROOT$DATA_DIR"
# Copy then rename, so a running service never sees a half-written executable.
cp "$BINARY" "$ROOT$BIN_PATH.new"
chmod 0755 "$ROOT$BIN_PATH.new"
mv -f "$ROOT$BIN_PATH.new" "$ROOT$BIN_PATH"
chmod 0700 "$ROOT$DATA_DIR"
[ "$SYSTEMD" -eq 1 ] && chown "$SERVICE_USER:" "$ROOT$DATA_DIR"

ENV_FILE="$ROOT$CONFIG_DIR/coffer.env"
if [ ! -f "$ENV_FILE" ]; then
  umask 077
  cat > "$ENV_FILE" <<ENV
# Coffer settings; see 'coffer serve --help' for every variable. Restart after editing:
#   systemctl restart coffer
PORT=$PORT
HOST=$HOST
COFFER_DATA_DIR=$DATA_DIR
LOG_LEVEL=info
# COFFER_DEFAULT_STORAGE_LIMIT=50G
# TRASH_RETENTION_DAYS=30
# METRICS_ALLOWED_IPS=127.0.0.1,::1,::ffff:127.0.0.1
# AUDIT_RETENTION_DAYS=90
# QUEUE_METRICS_INTERVAL_SECONDS=60
# UPDATE_FEED_URL=
# COFFER_IDLE_TIMEOUT_SECONDS=30
# COFFER_MAX_CONNECTIONS_PER_IP=64
# COFFER_MIN_FREE_BYTES=512M
# Less memory for a little speed on hosts with 16 GiB or more (README, Configuration):
# BUN_JSC_forceRAMSize=4294967296
# Single sign-on through an OpenID Connect provider (README, Single sign-on):
# OIDC_ISSUER_URL=https://auth.example.com/application/o/coffer/
# OIDC_CLIENT_ID=coffer
# OIDC_CLIENT_SECRET_FILE=$CONFIG_DIR/oidc-client-secret
# OIDC_PROVIDER_NAME=Authentik
ENV
  [ "$SYSTEMD" -eq 1 ] && chown "root:$SERVICE_USER" "$ENV_FILE" && chmod 0640 "$ENV_FILE"
  echo "wrote $CONFIG_DIR/coffer.env"
else
  echo "kept existing $CONFIG_DIR/coffer.env"
fi

cat > "$UNIT" <<UNITFILE
[Unit]
Description=Coffer file storage and sharing
Documentation=https://github.com/coffer/coffer
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=$SERVICE_USER
Group=$SERVICE_USER
EnvironmentFile=$CONFIG_DIR/coffer.env
ExecStart=$BIN_PATH serve
Restart=on-failure
RestartSec=5
# SIGTERM lets in-flight requests and the running job finish before exit.
KillSignal=SIGTERM
TimeoutStopSec=30
LimitNOFILE=65536
NoNewPrivileges=true
PrivateTmp=true
ProtectSystem=strict
ProtectHome=true
ReadWritePaths=$DATA_DIR
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectControlGroups=true
RestrictSUIDSGID=true
LockPersonality=true
UMask=0077

[Install]
WantedBy=multi-user.target
UNITFILE

echo "installed coffer $VERSION to $BIN_PATH"
if command -v systemd-analyze >/dev/null 2>&1 && [ -z "$ROOT" ]; then
  systemd-analyze verify "$UNIT" >/dev/null 2>&1 || echo "warning: systemd-analyze verify reports problems with $UNIT" >&2
fi
URL_PORT=$(sed -n 's/^PORT=//p' "$ENV_FILE" | tail -n 1)
URL="http://$(hostname 2>/dev/null || echo localhost):${URL_PORT:-$PORT}"
if [ "$SYSTEMD" -eq 1 ]; then
  systemctl daemon-reload
  systemctl enable coffer.service >/dev/null
  if [ "$START" -eq 1 ]; then
    systemctl restart coffer.service
    echo "coffer.service is running: $URL"
  else
    echo "coffer.service is enabled; start it with: systemctl start coffer (it will listen on $URL)"
  fi
else
  echo "wrote $UNIT; once enabled and started it listens on $URL"
fi
