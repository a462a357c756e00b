// A client of the Tracked-Channel Monitoring API written against the types
// openapi-typescript generates from schemas/openapi.yaml. tsc --strict
// compiles it only if the types say what a client needs: FeedPage and
// VideosResponse with their members, Event a union that narrows by `type`
// to each type's own fields, counts that may be null. Run on the documents
// the simulator served, it reads every event's own fields, so a type that
// compiled but lied would show up as undefined here.
//
//   node generated/out/check.js CAPTURE_DIR
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { components } from "./generated/tcm-api";

type Schemas = components["schemas"];
type Event = Schemas["Event"];
type FeedPage = Schemas["FeedPage"];
type VideosResponse = Schemas["VideosResponse"];
type VideoEntry = Schemas["VideoEntry"];

const counts = (n: number | null): string => (n === null ? "unknown" : String(n));

// describe reads the fields of each event type. The switch must cover every
// type: the `never` below stops compiling if the union gains or loses one.
function describe(ev: Event): string {
  const where = `${ev.channel.title} at ${new Date(ev.createdAt).toISOString()}`;
  switch (ev.type) {
    case "video_published":
      return `${where}: published ${ev.video.currentTitle} (${counts(ev.video.viewCount)} views, members only: ${ev.video.isMembersOnly})`;
    case "title_changed":
      return `${where}: ${ev.video.platformVideoId} renamed from ${ev.oldTitle} to ${ev.newTitle}`;
    case "thumbnail_changed":
      return `${where}: ${ev.video.platformVideoId} thumbnail ${ev.oldThumbnailUrl} -> ${ev.newThumbnailUrl}`;
    case "title_ab_test":
      return `${where}: ${ev.video.currentTitle} tests ${ev.titles.length} titles`;
    case "title_ab_test_concluded":
      return `${where}: ${ev.finalTitle} won among ${ev.titles.join(" | ")}`;
    case "thumbnail_ab_test":
      return `${where}: ${ev.video.platformVideoId} tests ${ev.thumbnailUrls.length} thumbnails`;
    case "thumbnail_ab_test_concluded":
      return `${where}: ${ev.finalThumbnailUrl} won among ${ev.thumbnailUrls.length}`;
    case "members_only_changed":
      return `${where}: ${ev.video.currentTitle} members only: ${ev.isMembersOnly}`;
    case "subscriber_change":
      return `${where}: subscribers ${counts(ev.oldSubscriberCount)} -> ${ev.newSubscriberCount}`;
    case "channel_renamed":
      return `${where}: renamed from ${ev.oldChannelTitle} to ${ev.newChannelTitle}`;
    case "channel_avatar_changed":
      return `${where}: avatar ${ev.oldAvatarUrl} -> ${ev.newAvatarUrl}`;
    default: {
      const unknownType: never = ev;
      throw new Error(`an event of no known type: ${JSON.stringify(unknownType)}`);
    }
  }
}

// What the types must refuse. Never called: each line must fail to
// compile, or tsc fails on the unused @ts-expect-error.
export function refused(ev: Event, sample: Schemas["StatSample"]): void {
  if (ev.type === "video_published") {
    // @ts-expect-error a video_published event has no oldTitle
    void ev.oldTitle;
  }
  if (ev.type === "subscriber_change") {
    // @ts-expect-error a channel-level event has no video to read
    void ev.video.platformVideoId;
  }
  // @ts-expect-error an event's type is one of the eleven
  const t: Event["type"] = "video_deleted";
  // @ts-expect-error a count may be null
  const n: number = sample.viewCount;
  void t, n;
}

function entry(e: VideoEntry): string {
  const v = e.video; // VideoStats fields and the channel
  const last = e.statSamples[e.statSamples.length - 1];
  const views = last === undefined ? "no samples" : `${counts(last.viewCount)} views at the last sample`;
  return `${v.channel.title}: ${v.currentTitle} (${counts(v.likeCount)} likes), ${e.events.length} events, ${views}, window ${e.historyWindowDays} days`;
}

const dir = process.argv[2];
if (dir === undefined) {
  console.error("usage: node check.js CAPTURE_DIR");
  process.exit(2);
}
const seen = new Map<string, number>();
const problems: string[] = [];
let documents = 0;
function check(where: string, text: string): void {
  // A field the types promised but the document lacks reads as undefined.
  if (text.includes("undefined")) problems.push(`${where}: ${text}`);
}
function events(where: string, list: Event[]): void {
  list.forEach((ev, i) => {
    seen.set(ev.type, (seen.get(ev.type) ?? 0) + 1);
    check(`${where} event ${i}`, describe(ev));
  });
}
for (const name of readdirSync(dir).sort()) {
  const text = readFileSync(join(dir, name), "utf8");
  if (name.startsWith("feed-page-")) {
    const page: FeedPage = JSON.parse(text);
    events(name, page.events);
    check(name, `next cursor ${page.nextCursor === null ? "none" : page.nextCursor}`);
  } else if (name.startsWith("videos-response-")) {
    const answer: VideosResponse = JSON.parse(text);
    answer.videos.forEach((e, i) => {
      check(`${name} video ${i}`, entry(e));
      events(`${name} video ${i}`, e.events);
    });
    check(name, `missing: ${answer.missingVideoIds.join(", ")}`);
  } else {
    continue;
  }
  documents++;
}
const types: Event["type"][] = [
  "video_published", "title_changed", "thumbnail_changed", "title_ab_test", "title_ab_test_concluded",
  "thumbnail_ab_test", "thumbnail_ab_test_concluded", "members_only_changed", "subscriber_change",
  "channel_renamed", "channel_avatar_changed",
];
for (const t of types) {
  if (!seen.has(t)) problems.push(`no ${t} event was read`);
}
for (const p of problems) console.log(`FAIL: ${p}`);
const total = [...seen.values()].reduce((a, b) => a + b, 0);
if (problems.length > 0 || documents === 0) {
  console.log(`openapi-typescript client: ${problems.length} problem(s) in ${documents} documents`);
  process.exit(1);
}
console.log(`openapi-typescript client: ${documents} documents, ${total} events of all ${types.length} types read through narrowed types`);
