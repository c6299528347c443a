/* Kernel images shared by content: a program made again (every replay of a
 * Light Metal binary creates its programs anew) finds its kernels already
 * validated and predecoded instead of decoding them once more.
 *
 * Each rv_image_cache_get of an ELF is matched by one rv_image_cache_put of
 * the image it gave. Images nothing holds stay cached, the least recently
 * used dropped beyond `keep` of them; rv_image_cache_destroy frees the
 * rest, and every image must have been put back by then.
 *
 * Thread-safe: any thread may get and put; images are immutable (rv_image.h).
 */
#ifndef LM_SIM_RV32_RV_IMAGE_CACHE_H
#define LM_SIM_RV32_RV_IMAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "sim/rv32/rv_image.h"

typedef struct rv_image_cache rv_image_cache;

/* A cache keeping at most `keep` images nothing holds.
 * LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status rv_image_cache_create(uint32_t keep, rv_image_cache **out_cache);

/* Frees the cache and its images (none may be held any more); NULL is
 * accepted. */
void rv_image_cache_destroy(rv_image_cache *cache);

/* The image of the ELF in elf[0, size): a cached one made from the same
 * bytes, else loaded (rv_image_load's LM_ERR_INVALID_FILE, or
 * LM_ERR_OUT_OF_HOST_MEMORY) and cached. `hash` is hash64(elf, size, 0)
 * when the caller has it already (a blob checked against its file), or 0
 * to have it computed; the bytes are compared all the same. The bytes are
 * not kept by reference: *out_elf (when not NULL) receives the cache's copy,
 * valid while the image is held. */
lm_status rv_image_cache_get(rv_image_cache *cache, const void *elf, size_t size, uint64_t hash,
                             const rv_image **out_image, const void **out_elf);

/* One more hold on an image that rv_image_cache_get gave and that is still
 * held, matched by one more rv_image_cache_put: a caller holding the same
 * ELF many times over takes the image once by its bytes, then again by
 * the image, without hashing or comparing the bytes each time. */
void rv_image_cache_hold(rv_image_cache *cache, const rv_image *image);

/* Gives back an image rv_image_cache_get gave; NULL is accepted. */
void rv_image_cache_put(rv_image_cache *cache, const rv_image *image);

#endif
