/** Executables `npm run build -- --target <name>` can produce, each from the runtime npm ships for it. */
export interface BuildTarget {
  /** `bun build --target` value. */
  bunTarget: string;
  /** The npm package holding that runtime. */
  npmPackage: string;
}

export const BUILD_TARGETS = {
  'linux-x64': { bunTarget: 'bun-linux-x64', npmPackage: '@oven/bun-linux-x64' },
  'linux-arm64': { bunTarget: 'bun-linux-arm64', npmPackage: '@oven/bun-linux-aarch64' },
  'linux-x64-musl': { bunTarget: 'bun-linux-x64-musl', npmPackage: '@oven/bun-linux-x64-musl' },
  'linux-arm64-musl': { bunTarget: 'bun-linux-arm64-musl', npmPackage: '@oven/bun-linux-aarch64-musl' },
} as const satisfies Record<string, BuildTarget>;
