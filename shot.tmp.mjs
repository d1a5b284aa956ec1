import { chromium } from 'playwright-core';
const [url, ...pages] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.on('console', (m) => console.log('console:', m.type(), m.text()));
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto(url);
console.log('after login:', page.url());
const origin = new URL(url).origin;
for (const [i, p] of [ '/', ...pages].entries()) {
  await page.goto(origin + p);
  await page.waitForSelector('#app[data-ready]', { timeout: 15000 });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shot-${i}.png`, fullPage: false });
  console.log(p, await page.locator('#app').getAttribute('data-ready'));
}
await browser.close();
