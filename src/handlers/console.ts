/** Console tag: the account's console page, its two files, and its charting library's two (uPlot). */
import { pageReply, scriptReply, styleReply } from '../api/page-replies.js';
import type { RawReply } from '../api/types.js';
import { consoleAsset } from '../services/console/console-service.js';

export async function getConsole(): Promise<RawReply> {
  return pageReply(consoleAsset('index.html'));
}

export async function getConsoleScript(): Promise<RawReply> {
  return scriptReply(consoleAsset('console.js'));
}

export async function getConsoleStyle(): Promise<RawReply> {
  return styleReply(consoleAsset('console.css'));
}

export async function getConsoleChartScript(): Promise<RawReply> {
  return scriptReply(consoleAsset('uplot.js'));
}

export async function getConsoleChartStyle(): Promise<RawReply> {
  return styleReply(consoleAsset('uplot.css'));
}
