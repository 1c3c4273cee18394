import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderAdapterFor, SANDBOX_ADAPTER } from '../capabilities.js';
import { parseSandboxDirectives, stripSandboxDirectives } from '../sandbox/directives.js';
import { imagePixelSize } from './image-dimensions.js';
import { IMAGE_CAPABILITY, IMAGE_MODEL_IDS, type ImageGenerationRequest, type ImageOutcome, type ImageProvider } from './image-provider.js';
import { IMAGE_MODEL_ASPECT_RATIOS, IMAGE_MODEL_SIZES } from './image-models.js';
import { drawEditPicture, drawPromptPicture, referenceAspectRatio } from './sandbox-image-picture.js';

/** Image-only directive: the "upstream" refuses the picture for safety. */
const SAFETY_DIRECTIVE = '[sandbox:safety]';

/**
 * The in-process image "upstream" (DESIGN §1, §4a): needs no credentials and answers a real PNG
 * at the pixel size the size and aspect ratio imply (image-dimensions.ts; without a ratio, an edit
 * takes the listed ratio nearest its first reference's, a new picture 1:1), drawn from the prompt,
 * or for edits derived from the first reference image (falling back to the prompt picture when
 * that cannot be decoded, e.g. an HEVC HEIC). Deterministic: the same request gives the same bytes.
 * Directives in the prompt: `[sandbox:fail]` (failed, not retryable), `[sandbox:delay=<ms>]`,
 * `[sandbox:safety]` (refused for safety). Never rejects: an abort is a retryable failure.
 */
@ProviderAdapterFor(IMAGE_CAPABILITY)
export class SandboxImageProvider implements ImageProvider {
  readonly name = SANDBOX_ADAPTER;
  readonly live = false;
  readonly models = IMAGE_MODEL_IDS;

  credentialled(): boolean {
    return true;
  }

  available(): boolean {
    return true;
  }

  async generate(request: ImageGenerationRequest): Promise<ImageOutcome> {
    const prompt = request.prompt ?? '';
    const directives = parseSandboxDirectives(prompt);
    if (directives.delayMs > 0) {
      try {
        await sleep(directives.delayMs, undefined, { signal: request.signal });
      } catch {
        return aborted();
      }
    }
    if (request.signal?.aborted) return aborted();
    if (directives.fail) return { kind: 'failed', reason: 'sandbox: the generation failed (sandbox:fail)', retryable: false };
    if (prompt.includes(SAFETY_DIRECTIVE)) {
      return { kind: 'refused', category: 'safety', reason: 'sandbox: IMAGE_SAFETY (sandbox:safety)' };
    }
    const reference = request.references[0];
    // No ratio named: an edit follows its first reference, as the upstream does; a new picture is square.
    const aspectRatio = request.aspectRatio ?? (reference ? await referenceAspectRatio(reference.bytes, IMAGE_MODEL_ASPECT_RATIOS[request.model]) : '1:1');
    // The domain validates these; a mismatch here is a caller bug, reported as such.
    if (!IMAGE_MODEL_SIZES[request.model].includes(request.size) || !IMAGE_MODEL_ASPECT_RATIOS[request.model].includes(aspectRatio)) {
      return { kind: 'failed', reason: `sandbox: ${request.model} does not offer ${request.size} at ${aspectRatio}`, retryable: false };
    }
    const picturePrompt = stripSandboxDirectives(prompt.replaceAll(SAFETY_DIRECTIVE, ''));
    const size = imagePixelSize(request.size, aspectRatio);
    let bytes: Buffer | null = null;
    if (reference) {
      try {
        bytes = await drawEditPicture(reference.bytes, picturePrompt, size);
      } catch {
        bytes = null; // undecodable reference: the prompt picture stands in (documented)
      }
    }
    bytes ??= await drawPromptPicture(picturePrompt, size);
    if (request.signal?.aborted) return aborted();
    return { kind: 'succeeded', image: { mimeType: 'image/png', bytes } };
  }
}

function aborted(): ImageOutcome {
  return { kind: 'failed', reason: 'sandbox: the call was cancelled', retryable: true };
}
