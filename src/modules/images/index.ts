// Images' public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { ImagesModule } from './images.module.js';
export { ImageGenerationService, type ImageGenerationResponse } from './image-generation.service.js';
