/** Playground tag: the search playground page and its two files. */
import { pageReply, scriptReply, styleReply } from '../api/page-replies.js';
import type { RawReply } from '../api/types.js';
import { playgroundAsset } from '../services/playground/playground-service.js';

export async function getSearchPlayground(): Promise<RawReply> {
  return pageReply(playgroundAsset('index.html'));
}

export async function getSearchPlaygroundScript(): Promise<RawReply> {
  return scriptReply(playgroundAsset('playground.js'));
}

export async function getSearchPlaygroundStyle(): Promise<RawReply> {
  return styleReply(playgroundAsset('playground.css'));
}
