/**
 * The world map of the live view: Natural Earth's 1:110m country outlines (the `world-atlas`
 * package, TopoJSON) projected equirectangularly into one SVG, each country a path whose
 * `data-cc` is its ISO 3166-1 alpha-2 code, so the page can colour it. Built once, served by the
 * process itself (no external resource).
 */
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { Topology, GeometryCollection } from 'topojson-specification';
import type { Feature, MultiPolygon, Polygon, Position } from 'geojson';

export const MAP_WIDTH = 960;
export const MAP_HEIGHT = 480;

const require = createRequire(import.meta.url);

function project([lon, lat]: Position): string {
  const x = ((lon! + 180) / 360) * MAP_WIDTH;
  const y = ((90 - lat!) / 180) * MAP_HEIGHT;
  return `${x.toFixed(1)},${y.toFixed(1)}`;
}

function ringPath(ring: Position[]): string {
  return 'M' + ring.map(project).join('L') + 'Z';
}

let cached: string | undefined;

/** The SVG of the world, countries as `<path class="country" data-cc="JP" ...>`. */
export function worldMapSvg(): string {
  if (cached !== undefined) return cached;
  const topology = require('world-atlas/countries-110m.json') as Topology<{ countries: GeometryCollection<{ name: string }> }>;
  const countries = require('i18n-iso-countries') as { numericToAlpha2(n: string): string | undefined };
  const collection = feature(topology, topology.objects.countries);
  const paths: string[] = [];
  for (const f of collection.features as Feature<Polygon | MultiPolygon, { name: string }>[]) {
    if (f.geometry === null) continue;
    const polygons = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
    const d = polygons.map((poly) => poly.map(ringPath).join('')).join('');
    const cc = f.id === undefined ? undefined : countries.numericToAlpha2(String(f.id));
    const name = f.properties.name.replace(/[<>&"]/g, '');
    paths.push(`<path class="country" ${cc ? `data-cc="${cc}" ` : ''}d="${d}"><title>${name}</title></path>`);
  }
  cached = `<svg xmlns="http://www.w3.org/2000/svg" id="world" viewBox="0 0 ${MAP_WIDTH} ${MAP_HEIGHT}" preserveAspectRatio="xMidYMid meet">` + `<rect width="${MAP_WIDTH}" height="${MAP_HEIGHT}" fill="#eef3f7"/>` + paths.join('') + '</svg>';
  return cached;
}
