import { instance } from '../app/session.ts';

const ZOOM = 14;
const TILE = 256;

/**
 * The place on one tile of the configured map server (MAP_TILE_URL), a dot where the photo was taken;
 * nothing when none is configured, so no request leaves for another server.
 */
export function MapTile({ latitude, longitude }: { latitude: number; longitude: number }) {
  const template = instance.value?.mapTileUrl;
  if (!template) return null;
  // Web Mercator, as tile servers cut the world: the tile holding the point, and the point within it.
  const n = 2 ** ZOOM;
  const lat = (Math.max(-85.0511, Math.min(85.0511, latitude)) * Math.PI) / 180;
  const fx = ((longitude + 180) / 360) * n;
  const fy = ((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * n;
  const [x, y] = [Math.min(n - 1, Math.floor(fx)), Math.min(n - 1, Math.floor(fy))];
  const src = template.replace('{z}', String(ZOOM)).replace('{x}', String(x)).replace('{y}', String(y));
  return (
    <div class="map-tile">
      <img src={src} width={TILE} height={TILE} alt="Map of the place the photo was taken" referrerpolicy="no-referrer" />
      <span
        class="map-dot"
        style={{ left: `${((fx - x) * 100).toFixed(2)}%`, top: `${((fy - y) * 100).toFixed(2)}%` }}
        aria-hidden="true"
      />
    </div>
  );
}
