import { describe, expect, test } from 'bun:test';
import { clientName, nextcloudAgent } from '../../src/services/accounts/client-agent.ts';

describe('Nextcloud clients from their User-Agent', () => {
  test('desktop on each platform, nextcloudcmd, Android and iOS: app, platform and version', () => {
    const cases: Array<[string, { app: string; platform: string; appVersion: string }]> = [
      [
        'Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-6.1.0-13-amd64 ClientArchitecture: x86_64 OsArchitecture: x86_64)',
        { app: 'Nextcloud desktop', platform: 'Linux', appVersion: '3.7.3' },
      ],
      [
        'Mozilla/5.0 (Windows) mirall/3.13.2 (Nextcloud, windows-10.0.19045 ClientArchitecture: x86_64 OsArchitecture: x86_64)',
        { app: 'Nextcloud desktop', platform: 'Windows', appVersion: '3.13.2' },
      ],
      [
        'Mozilla/5.0 (Macintosh) mirall/3.14.0 (Nextcloud, osx-23.4.0 ClientArchitecture: arm64 OsArchitecture: arm64)',
        { app: 'Nextcloud desktop', platform: 'macOS', appVersion: '3.14.0' },
      ],
      ['Mozilla/5.0 (Android) Nextcloud-android/3.29.1', { app: 'Nextcloud Android', platform: 'Android', appVersion: '3.29.1' }],
      ['Mozilla/5.0 (iOS) Nextcloud-iOS/5.3.2', { app: 'Nextcloud iOS', platform: 'iOS', appVersion: '5.3.2' }],
    ];
    for (const [ua, agent] of cases) expect(nextcloudAgent(ua)).toEqual(agent);
    expect(clientName(cases[0]![0])).toBe('Nextcloud desktop (Linux)');
    expect(clientName(cases[2]![0])).toBe('Nextcloud desktop (macOS)');
    expect(clientName(cases[3]![0])).toBe('Nextcloud Android');
    // What the desktop client sends when it starts signing in: the computer's name and the platform.
    expect(clientName('anna-laptop (Desktop Client - Windows)')).toBe('Nextcloud desktop on anna-laptop (Windows)');
    expect(clientName('studio.local (Desktop Client - Macintosh)')).toBe('Nextcloud desktop on studio.local (macOS)');
    expect(clientName(' (Desktop Client - Linux)')).toBe('Nextcloud desktop (Linux)');
    // The Android app's sign-in web view: the phone's maker and model.
    expect(clientName('Google Pixel 7 (Android)')).toBe('Nextcloud Android on Google Pixel 7');
  });

  test('browsers and other WebDAV clients are not Nextcloud clients; their name is their agent, shortened and without control characters', () => {
    for (const ua of [
      null,
      '',
      'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0',
      'rclone/v1.60.1',
      'WebDAVFS/3.0.0 (03008000) Darwin/22.1.0',
    ])
      expect(nextcloudAgent(ua)).toBeNull();
    expect(clientName('rclone/v1.60.1')).toBe('rclone/v1.60.1');
    expect(clientName(null)).toBe('Unnamed client');
    expect(clientName('\u0007\u200e ')).toBe('Unnamed client');
    const long = clientName(`x${'y'.repeat(300)}`);
    expect(long).toHaveLength(100);
    expect(long.endsWith('…')).toBe(true);
  });
});
