import { AppError } from '../../core/errors';
import { countSessions, listSessionEntries } from '../../core/stores/session-store';
import { envelope, errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { story, storyBody, targetGroupList, topicList } from '../schemas/summaries.schemas';
import { runSummary, type SummaryDeps } from '../services/summaries';
import { summaryErrors } from './tracks.routes';

/** Stories (spec §4.5): topics from the session store, target groups from STORY_TARGET_GROUPS. */
export function storyRoutes(api: ApiRouter, deps: SummaryDeps): void {
  const tags = ['Story'];
  const groups = deps.config.storyTargetGroups;
  api.add({
    method: 'get',
    path: '/api/story/topics',
    summary: 'The topics of the processed sessions',
    tags,
    description:
      "Topics come from the session template's frontmatter; a session written in several languages counts once per topic.",
    responses: { 200: jsonResponse(topicList, 'Topics') },
    handler: async (ctx) => {
      ctx.body = {
        status: 'success',
        data: { topics: countSessions(await listSessionEntries(deps.jobs.store), 'topic') },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/story/target-groups',
    summary: 'The target groups stories are written for',
    tags,
    description: 'Configured with STORY_TARGET_GROUPS (comma-separated).',
    responses: { 200: jsonResponse(targetGroupList, 'Target groups') },
    handler: (ctx) => {
      ctx.body = { status: 'success', data: { target_groups: groups } };
    },
  });

  api.add({
    method: 'post',
    path: '/api/story/generate',
    summary: 'Write a story on a topic for a target group',
    tags,
    description:
      'Each session of the topic says what it contributes (one model call per piece of at most SUMMARY_CHUNK_CHARS); the story is written from the ' +
      'contributions, merged within the same bound; the template (default `Story`) shapes it. Runs as a job; waits ' +
      'up to MEDIA_SYNC_WAIT_MS, then 504 with `details.job_id`.',
    body: storyBody,
    responses: {
      200: { description: 'The story', content: { 'application/json': { schema: envelope(story) } } },
      404: errorResponse('Unknown topic, target group or template'),
      ...summaryErrors,
    },
    handler: async (ctx, { body }) => {
      const group = groups.find((g) => g.toLowerCase() === body.target_group.trim().toLowerCase());
      if (!(await listSessionEntries(deps.jobs.store, { topic: body.topic })).length) {
        throw new AppError('TOPIC_NOT_FOUND', `No sessions on the topic ${JSON.stringify(body.topic)}.`, {
          topic: body.topic,
        });
      }
      if (!group)
        throw new AppError('NOT_FOUND', `Unknown target group ${JSON.stringify(body.target_group)}.`, {
          target_group: body.target_group,
          target_groups: groups,
        });
      await runSummary(ctx, deps, 'story', { ...body, target_group: group });
    },
  });
}
