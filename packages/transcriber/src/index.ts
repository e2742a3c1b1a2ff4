export { createTranscriber, dtwPreset } from './transcriber.ts';
export type { Onsets, Transcriber, TranscriberOptions, TranscribeRequest, TranscribeResult } from './transcriber.ts';
export { acousticAligner, alignmentInputs, parseAlignment, parseLexicon, pronunciationsOf, lexiconParts } from './acoustic-align.ts';
export type { AcousticAligner, Lexicon } from './acoustic-align.ts';
export { TranscriptionError } from './errors.ts';
export { ffmpegToWavArgs, isWhisperWav, parseWavHeader } from './audio.ts';
export type { TranscriptionErrorCode } from './errors.ts';
export { readWhisperBuildInfo, cachedBaseModelPath, testModelPath } from './whisper-bin.ts';
export type { TranscriberEnv, WhisperBuildInfo } from './whisper-bin.ts';
export {
  modelsPull,
  modelsList,
  defaultModelsDir,
  modelSearchDirs,
  findInstalledModels,
  locateModel,
  CONVERTED_MODELS,
  resolveModelPath,
  modelFileName,
  sha1File,
  WHISPER_MODELS,
  DEFAULT_MODEL_BASE_URL,
} from './models.ts';
export type { ModelsPullOptions, ModelsPullResult, ModelListEntry, ModelsListOptions, ModelCatalog } from './models.ts';
export { toWords, WhisperServerResponseSchema } from './to-words.ts';
export type { WordTiming, ToWordsOptions, WhisperServerResponse } from './to-words.ts';
export { WHISPER_LANGUAGES, languageCode } from './languages.ts';
export { wordErrorRate, scoreErrors, scoringUnits, onsetErrorsMs, parseReferenceOnsets, parseAlignedWords, normalizeWords, percentile } from './metrics.ts';
export type { ReferenceOnset } from './metrics.ts';
export { convertCt2ToGgml, convertCt2FileToGgml } from './ct2-to-ggml.ts';
