// How the browser tests start headless Chromium (the one setup.sh installs, or $CHROMIUM): the
// flags every test runs it with, a throwaway browser or one on a profile directory that outlives
// it, and the pair of a static server and a browser that most test files share.
import { chromium } from "playwright-core";
import { startStaticServer } from "./static-server.mjs";

/** No sandbox (root in CI), no GPU, /tmp instead of a small /dev/shm, nothing fetched from
 *  the network behind the test's back. */
const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];

/** Background tabs' timers at full rate: a hidden tab's are otherwise throttled to once a
 *  second, which a lease renewed every few hundred milliseconds would miss. */
export const UNTHROTTLED_FLAGS = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"];

const executablePath = () => process.env.CHROMIUM ?? "/usr/bin/chromium";

/** A browser with a fresh, throwaway profile. */
function launchBrowser(extraFlags = []) {
  return chromium.launch({ executablePath: executablePath(), args: [...CHROMIUM_FLAGS, ...extraFlags] });
}

/** A browser context on the profile directory `dir`, whose IndexedDB outlives the browser. */
export function launchOnProfile(dir, extraFlags = []) {
  return chromium.launchPersistentContext(dir, { executablePath: executablePath(), args: [...CHROMIUM_FLAGS, ...extraFlags], headless: true });
}

/** The static server and a browser, for a test file's `before`; `stopServerAndBrowser` ends
 *  both in its `after`. */
export async function startServerAndBrowser(extraFlags = []) {
  const server = await startStaticServer();
  return { server, browser: await launchBrowser(extraFlags) };
}

/** Closes what `startServerAndBrowser` started (either may be missing if it failed). */
export async function stopServerAndBrowser({ server, browser }) {
  await browser?.close();
  await server?.close();
}
