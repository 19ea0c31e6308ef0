/** Executables `npm run build -- --target <name>` can produce, each from the runtime npm ships for it. */
export interface BuildTarget {
  /** `bun build --target` value. */
  bunTarget: string;
  /** The npm package holding that runtime. */
  npmPackage: string;
  /** sharp's name for the platform: its native packages are @img/sharp-<name> and @img/sharp-libvips-<name>. */
  sharpPlatform: string;
}

export const BUILD_TARGETS = {
  'linux-x64': { bunTarget: 'bun-linux-x64', npmPackage: '@oven/bun-linux-x64', sharpPlatform: 'linux-x64' },
  'linux-arm64': { bunTarget: 'bun-linux-arm64', npmPackage: '@oven/bun-linux-aarch64', sharpPlatform: 'linux-arm64' },
  'linux-x64-musl': { bunTarget: 'bun-linux-x64-musl', npmPackage: '@oven/bun-linux-x64-musl', sharpPlatform: 'linuxmusl-x64' },
  'linux-arm64-musl': { bunTarget: 'bun-linux-arm64-musl', npmPackage: '@oven/bun-linux-aarch64-musl', sharpPlatform: 'linuxmusl-arm64' },
} as const satisfies Record<string, BuildTarget>;
