import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { loadConfig } from '../../../src/config.ts';
import { startServer } from '../../../src/server.ts';
import { IpMatcher } from '../../../src/lib/ip.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { namingProblems, parseExposition, promtool, sample } from '../../helpers/prometheus.ts';
import { skipHere } from '../../helpers/prerequisites.ts';
import { eventually } from '../../helpers/eventually.ts';

const AUDIT_METRICS = {
  audit_events_queued_total: 'COUNTER',
  audit_events_processed_total: 'COUNTER',
  audit_events_failed_total: 'COUNTER',
  audit_queue_depth: 'GAUGE',
  audit_queue_failed_depth: 'GAUGE',
  audit_processing_duration_seconds: 'HISTOGRAM',
  audit_last_processed_timestamp: 'GAUGE',
};

describe('GET /metrics', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  test('loopback: Prometheus text format with process metrics, the seven audit metrics and the three backup metrics, nothing else', async () => {
    const res = await t.client().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parseExposition(await res.text());
    for (const [name, type] of Object.entries(AUDIT_METRICS)) expect(families.get(name)?.type).toBe(type as never);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'process_open_fds',
      'bun_heap_used_bytes',
    ]) {
      expect(families.has(name)).toBe(true);
    }
    expect(sample(families, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    for (const name of families.keys()) expect(name).toMatch(/^(process_|bun_|audit_|coffer_backup_)/);
    expect([...families.keys()].some((n) => /http|request|cache|storage/.test(n))).toBe(false);
  });

  test('passes promtool check metrics (lint included) and the naming rules, before and after audit events; series have one label shape from the start', async () => {
    const fresh = await startTestServer();
    try {
      const first = await (await fresh.client().get('/metrics')).text();
      const families = parseExposition(first);
      // Every failure reason is there at 0 before the first failure; the queued counter has no unlabelled sample.
      for (const reason of ['enqueue', 'processing', 'invalid_event'])
        expect(sample(families, 'audit_events_failed_total', { reason })).toBe(0);
      expect(families.get('audit_events_failed_total')!.metrics).toHaveLength(3);
      expect(first).not.toMatch(/^audit_events_queued_total /m);
      for (const name of ['process_cpu_seconds_total', 'process_cpu_user_seconds_total', 'process_cpu_system_seconds_total'])
        expect(families.get(name)?.type).toBe('COUNTER');
      await fresh.client().post('/api/login', { email: 'nobody@example.test', password: 'wrong' });
      fresh.server.ctx.services.audit.flush();
      const later = await (await fresh.client().get('/metrics')).text();
      for (const text of [first, later]) {
        expect(namingProblems(parseExposition(text))).toEqual([]);
        const checked = promtool(text);
        if (checked === null) {
          skipHere('the promtool check (the parser and naming rules ran)', 'promtool is not installed (apt-get install prometheus)');
          continue;
        }
        expect(checked).toEqual({ code: 0, output: '' });
      }
    } finally {
      await fresh.stop();
    }
  });

  test('the audit metrics move: queued by action and status, processed, last-processed time, batch durations', async () => {
    const before = parseExposition(await (await t.client().get('/metrics')).text());
    const queuedBefore = sample(before, 'audit_events_queued_total', { action: 'auth.sign_in', status: 'failure' }) ?? 0;
    const processedBefore = sample(before, 'audit_events_processed_total') ?? 0;
    await t.client().post('/api/login', { email: 'nobody@example.test', password: 'wrong' });
    await t.client().post('/api/login', { email: 'nobody@example.test', password: 'wrong' });
    t.server.ctx.services.audit.flush();
    const after = parseExposition(await (await t.client().get('/metrics')).text());
    expect(sample(after, 'audit_events_queued_total', { action: 'auth.sign_in', status: 'failure' })).toBe(queuedBefore + 2);
    expect(sample(after, 'audit_events_processed_total')).toBeGreaterThanOrEqual(processedBefore + 2);
    expect(sample(after, 'audit_last_processed_timestamp')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(sample(after, 'audit_processing_duration_seconds')).toBeGreaterThan(0);
  });

  test('an event that cannot be processed is parked and counted as failed', async () => {
    const sqlite = t.server.ctx.db.$client;
    sqlite.query("INSERT INTO audit_queue (event, queued_at) VALUES ('{not json', ?)").run(Date.now());
    t.server.ctx.services.audit.flush();
    t.server.ctx.services.audit.refreshQueueGauges();
    const families = parseExposition(await (await t.client().get('/metrics')).text());
    expect(sample(families, 'audit_events_failed_total', { reason: 'invalid_event' })).toBe(1);
    expect(sample(families, 'audit_queue_failed_depth')).toBe(1);
    expect(sample(families, 'audit_queue_depth')).toBe(0);
  });
});

describe('queue gauges', () => {
  test('refresh on their own every QUEUE_METRICS_INTERVAL_SECONDS', async () => {
    const t = await startTestServer({ env: { QUEUE_METRICS_INTERVAL_SECONDS: '1' } });
    try {
      t.server.ctx.db.$client.query("INSERT INTO audit_queue (event, status, queued_at) VALUES ('{}', 'failed', ?)").run(Date.now());
      await eventually(
        async () => expect(sample(parseExposition(await (await t.client().get('/metrics')).text()), 'audit_queue_failed_depth')).toBe(1),
        // The default deadline, a third of the 60 s default interval: room for a loaded machine.
        { intervalMs: 200 },
      );
    } finally {
      await t.stop();
    }
  });
});

describe('metrics allow-list', () => {
  test('an address outside METRICS_ALLOWED_IPS gets 403 Forbidden as text; X-Forwarded-For is ignored from an unknown proxy', async () => {
    const t = await startTestServer({ env: { METRICS_ALLOWED_IPS: '10.1.0.0/16' } });
    try {
      const res = await t.client().get('/metrics', { 'x-forwarded-for': '10.1.2.3' });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toStartWith('text/plain');
      expect(await res.text()).toBe('Forbidden');
    } finally {
      await t.stop();
    }
  });

  test('behind a known proxy the forwarded client address decides', async () => {
    const t = await startTestServer({ env: { METRICS_ALLOWED_IPS: '10.1.0.0/16,2001:db8::/32' } });
    try {
      const a = await seed.admin(t);
      const set = await a.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] });
      expect((await json(set)).restartRequired).toBe(true);
      await t.restart();
      const viaProxy = (xff: string) => t.client().get('/metrics', { 'x-forwarded-for': xff });
      expect((await viaProxy('10.1.2.3')).status).toBe(200);
      expect((await viaProxy('::ffff:10.1.9.9')).status).toBe(200);
      expect((await viaProxy('2001:db8::5')).status).toBe(200);
      expect((await viaProxy('10.2.0.1')).status).toBe(403);
      expect((await viaProxy('10.1.2.3, 192.0.2.7')).status).toBe(403);
      expect((await t.client().get('/metrics')).status).toBe(403);
    } finally {
      await t.stop();
    }
  });

  test('the default list is loopback: IPv4, IPv6, and IPv4-mapped IPv6 (a dual-stack listener)', async () => {
    for (const host of ['::1', '::']) {
      const dataDir = tempDir();
      const server = await startServer(loadConfig({ port: 0, host, dataDir }, { LOG_LEVEL: 'silent' }));
      try {
        const base = host === '::1' ? `http://[::1]:${server.port}` : `http://127.0.0.1:${server.port}`;
        const res = await fetch(`${base}/metrics`);
        expect(res.status).toBe(200);
      } finally {
        await server.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
    const defaults = new IpMatcher(loadConfig({}, {}).metricsAllowedIps);
    for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(defaults.matches(ip)).toBe(true);
    for (const ip of ['127.0.0.2', '::2', '10.0.0.1']) expect(defaults.matches(ip)).toBe(false);
  });
});
