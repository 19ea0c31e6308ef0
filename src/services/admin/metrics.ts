import fs from 'node:fs';
import { Counter, Gauge, Histogram, MetricsRegistry, ObservedCounter } from '../../lib/metrics.ts';

/** Reads /proc where it exists (Linux); elsewhere the metric is left out. */
function procFdCount(): number | null {
  try {
    return fs.readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

function procMaxFds(): number | null {
  try {
    const m = /Max open files\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The `reason` label values of audit_events_failed_total. */
const AUDIT_FAILURE_REASONS = ['enqueue', 'processing', 'invalid_event'] as const;

/**
 * What /metrics exposes (docs/api.md › Monitoring and version): process metrics (`process_*`, and the runtime's
 * own as `bun_*`) and the seven `audit_*` metrics. Nothing else: no request counters or latencies.
 */
export class MetricsService {
  readonly registry = new MetricsRegistry();
  readonly auditQueued: Counter;
  readonly auditProcessed: Counter;
  readonly auditFailed: Counter;
  readonly auditQueueDepth: Gauge;
  readonly auditQueueFailedDepth: Gauge;
  readonly auditProcessingDuration: Histogram;
  readonly auditLastProcessed: Gauge;

  constructor() {
    const r = this.registry;
    const startTime = Date.now() / 1000 - process.uptime();
    // CPU time only grows: counters, as Prometheus' own process collector exposes them.
    r.register(
      new ObservedCounter(
        'process_cpu_user_seconds_total',
        'User CPU time spent by the process, in seconds.',
        () => process.cpuUsage().user / 1e6,
      ),
    );
    r.register(
      new ObservedCounter(
        'process_cpu_system_seconds_total',
        'System CPU time spent by the process, in seconds.',
        () => process.cpuUsage().system / 1e6,
      ),
    );
    r.register(
      new ObservedCounter('process_cpu_seconds_total', 'Total user and system CPU time spent by the process, in seconds.', () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1e6;
      }),
    );
    r.register(new Gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', (g) => g.set(process.memoryUsage().rss)));
    r.register(
      new Gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.', (g) => g.set(startTime)),
    );
    r.register(
      new Gauge('process_open_fds', 'Number of open file descriptors.', (g) => {
        const n = procFdCount();
        if (n !== null) g.set(n);
      }),
    );
    r.register(
      new Gauge('process_max_fds', 'Maximum number of open file descriptors.', (g) => {
        const n = procMaxFds();
        if (n !== null) g.set(n);
      }),
    );
    r.register(new Gauge('bun_heap_used_bytes', 'JavaScript heap in use, in bytes.', (g) => g.set(process.memoryUsage().heapUsed)));
    r.register(new Gauge('bun_heap_size_bytes', 'JavaScript heap size, in bytes.', (g) => g.set(process.memoryUsage().heapTotal)));
    r.register(
      new Gauge('bun_external_memory_bytes', 'Memory held outside the JavaScript heap (buffers), in bytes.', (g) =>
        g.set(process.memoryUsage().external),
      ),
    );
    r.register(new Gauge('bun_version_info', 'Bun runtime version, as a label.', (g) => g.set(1, { version: Bun.version })));

    this.auditQueued = r.register(
      new Counter('audit_events_queued_total', 'Audit events queued, by action and status.', ['action', 'status']),
    );
    this.auditProcessed = r.register(new Counter('audit_events_processed_total', 'Audit events written to the audit log.'));
    this.auditFailed = r.register(
      new Counter('audit_events_failed_total', 'Audit events that could not be queued or processed, by reason.', ['reason']),
    );
    // Every reason from the start, so the series exist (at 0) before the first failure and alerts can rate() them.
    for (const reason of AUDIT_FAILURE_REASONS) this.auditFailed.inc({ reason }, 0);
    this.auditQueueDepth = r.register(new Gauge('audit_queue_depth', 'Audit events waiting to be processed (refreshed periodically).'));
    this.auditQueueFailedDepth = r.register(
      new Gauge('audit_queue_failed_depth', 'Audit events parked after failing processing (refreshed periodically).'),
    );
    this.auditProcessingDuration = r.register(
      new Histogram(
        'audit_processing_duration_seconds',
        'Time to process one batch of queued audit events, in seconds.',
        [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      ),
    );
    this.auditLastProcessed = r.register(
      new Gauge('audit_last_processed_timestamp', 'When audit events were last processed, in seconds since the Unix epoch (0: never).'),
    );
    this.auditQueueDepth.set(0);
    this.auditQueueFailedDepth.set(0);
    this.auditLastProcessed.set(0);
  }

  render(): string {
    return this.registry.render();
  }
}
