/** usageInsights and trendInsights rules: this range against the previous one of equal length, and its peak. */
import type { components } from '../../../generated/openapi.js';
import type { TierName } from '../../rate-limit/tiers.js';
import { confidence, growthRate, level, MIN_TREND_SEARCHES, percent, searchesN, trendOf, weightOf, type Finding, type InsightFacts } from './insight-facts.js';

type Insights = components['schemas']['Insights'];
type UsageInsight = Insights['usageInsights'][number];
type TrendInsight = Insights['trendInsights'][number];

const nextTier: Record<TierName, { name: TierName; requestsPerHour: number } | null> = {
  free: { name: 'pro', requestsPerHour: 10_000 },
  pro: { name: 'enterprise', requestsPerHour: 100_000 },
  enterprise: null,
};

export function usageRules(facts: InsightFacts): Finding<UsageInsight>[] {
  return [growth(facts), peakUsage(facts)].filter((finding) => finding !== null);
}

/**
 * Rule: volume against the previous range of equal length. Trend up >= +10%, down <= -10%, else flat;
 * significance by |growthRate|: high >= 50, medium >= 20, else low.
 */
function growth(facts: InsightFacts): Finding<UsageInsight> | null {
  const current = facts.totals.searches;
  const previous = facts.previousSearches;
  if (current + previous === 0) return null;
  const rate = growthRate(current, previous);
  const trend = trendOf(rate);
  const significance = level(Math.abs(rate), 20, 50);
  const { startDate, endDate, days } = facts.range;
  const title = previous === 0 ? `${searchesN(current)}, none in the ${days} days before` :
    trend === 'up' ? `Search volume grew ${rate}%` : trend === 'down' ? `Search volume fell ${-rate}%` : `Search volume is steady (${rate >= 0 ? '+' : ''}${rate}%)`;
  const projection = previous === 0 ? current : Math.round(current * (1 + rate / 100));
  let recommendation: UsageInsight['recommendation'];
  if (trend === 'up' && significance !== 'low' && facts.topTables.length > 0) {
    recommendation = { action: `Make sure the most searched tables (${facts.topTables.slice(0, 3).map((t) => t.table).join(', ')}) have full-text indexes before the load grows`, effort: 'low' };
  } else if (trend === 'down' && significance !== 'low') {
    recommendation = { action: 'Look at zero-result and failed searches: users may have stopped finding what they look for', effort: 'low' };
  }
  return {
    wire: {
      type: 'growth',
      title,
      description: `${searchesN(current)} from ${startDate} to ${endDate} against ${previous} in the ${days} days before.`,
      trend,
      significance,
      implication: `At this pace the next ${days} days would bring about ${projection} searches.`,
      ...(recommendation && { recommendation }),
    },
    flat: {
      type: 'growth',
      confidence: confidence(current + previous),
      description: `${searchesN(current)} against ${previous} in the previous ${days} days (${rate >= 0 ? '+' : ''}${rate}%).`,
      actionable: recommendation !== undefined,
      data: { current, previous, growthRate: rate },
    },
    weight: weightOf[significance],
    headline: recommendation?.action,
  };
}

/**
 * Rule: the busiest hour against the hourly request limit of the caller's tier (their account's plan). Significance:
 * high >= 80% of the limit, medium >= 50%, else low.
 */
function peakUsage(facts: InsightFacts): Finding<UsageInsight> | null {
  const peak = facts.peakHour;
  if (!peak) return null;
  const { tier } = facts;
  const share = percent(peak.searches, tier.requestsPerHour);
  const significance = level(share, 50, 80);
  const next = nextTier[tier.name];
  const recommendation: UsageInsight['recommendation'] = significance === 'low' ? undefined : next
    ? { action: `Upgrade to the ${next.name} tier (${next.requestsPerHour.toLocaleString('en-US')} requests per hour) or spread searches over more hours`, effort: 'low' }
    : { action: 'Ask for custom limits or spread searches over more hours', effort: 'medium' };
  const hour = peak.bucket.slice(0, 16).replace('T', ' ');
  return {
    wire: {
      type: 'peak_usage',
      title: `Busiest hour: ${hour} UTC with ${searchesN(peak.searches)}`,
      description: `The busiest hour had ${searchesN(peak.searches)}, ${share}% of the ${tier.name} tier's ${tier.requestsPerHour.toLocaleString('en-US')} requests per hour.`,
      trend: trendOf(growthRate(facts.totals.searches, facts.previousSearches)),
      significance,
      implication: significance === 'high' ? 'At peak, searches alone come close to the hourly limit; every other request of the key counts too.'
        : significance === 'medium' ? 'Peak hours use half of the hourly limit or more.'
          : `Peak usage is well within the ${tier.name} tier.`,
      ...(recommendation && { recommendation }),
    },
    flat: {
      type: 'peak_usage',
      confidence: confidence(facts.totals.searches),
      description: `The busiest hour (${hour} UTC) had ${searchesN(peak.searches)}, ${share}% of the hourly limit.`,
      actionable: recommendation !== undefined,
      data: { hour: peak.bucket, searches: peak.searches, percentOfLimit: share },
    },
    weight: weightOf[significance],
    headline: recommendation?.action,
  };
}

/**
 * Rules: a query rises when it was searched at least MIN_TREND_SEARCHES times and at least twice as often as in
 * the previous range; it falls when it had at least MIN_TREND_SEARCHES before and at most half of that now.
 * The three biggest changes of each kind.
 */
export function queryTrends(facts: InsightFacts): Finding<TrendInsight>[] {
  const rising = facts.queryShifts
    .filter((s) => s.current >= MIN_TREND_SEARCHES && s.current >= 2 * s.previous)
    .sort((a, b) => b.current - b.previous - (a.current - a.previous) || (a.query < b.query ? -1 : 1))
    .slice(0, 3);
  const falling = facts.queryShifts
    .filter((s) => s.previous >= MIN_TREND_SEARCHES && 2 * s.current <= s.previous)
    .sort((a, b) => b.previous - b.current - (a.previous - a.current) || (a.query < b.query ? -1 : 1))
    .slice(0, 3);
  const { startDate, endDate, days, label } = facts.range;
  const finding = (shift: (typeof rising)[number], trend: 'up' | 'down'): Finding<TrendInsight> => ({
    wire: {
      type: trend === 'up' ? 'rising_query' : 'falling_query',
      title: `"${shift.query}" is ${trend === 'up' ? 'rising' : 'falling'}`,
      description: `${searchesN(shift.current)} from ${startDate} to ${endDate}, ${shift.previous} in the ${days} days before.`,
      trend,
      timeline: label,
      relatedQueries: relatedQueries(shift.query, facts.topQueries),
      businessImplication: trend === 'up'
        ? `Interest in "${shift.query}" is growing: check that what it looks for is connected and indexed.`
        : `Interest in "${shift.query}" is fading.`,
    },
    flat: {
      type: trend === 'up' ? 'rising_query' : 'falling_query',
      confidence: confidence(shift.current + shift.previous),
      description: `"${shift.query}": ${searchesN(shift.current)} against ${shift.previous} in the previous ${days} days.`,
      actionable: false,
      data: { query: shift.query, current: shift.current, previous: shift.previous },
    },
    weight: 0,
  });
  return [...rising.map((s) => finding(s, 'up')), ...falling.map((s) => finding(s, 'down'))];
}

/** Up to three other frequent queries sharing a word of three or more letters with `query`. */
export function relatedQueries(query: string, pool: string[]): string[] {
  const words = (text: string) => new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 3));
  const own = words(query);
  return pool.filter((other) => other !== query && [...words(other)].some((word) => own.has(word))).slice(0, 3);
}
