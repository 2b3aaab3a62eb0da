/*
 * test_context: gpuprims_context_* on every backend value, device names, streams,
 * synchronize, argument errors; failed calls leave their out-parameters untouched.
 */
#include "test_util.h"

#define CANARY 0x7E

static void check_device_name(gpuprims_context *ctx, const char *what) {
  size_t needed = 12345, needed2 = 12345, len, k;
  char *full, buf[512];
  if (!TU_EXPECT_OK(gpuprims_context_device_name(ctx, NULL, 0, &needed))) return;
  TU_CHECKF(needed > 0 && needed < 4096, "%s: device name length %zu", what, needed);
  if (needed == 0 || needed >= 4096) return;
  full = (char *)tu_xmalloc(needed + 1);
  memset(full, CANARY, needed + 1);
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, full, needed + 1, &needed2));
  TU_CHECKF(needed2 == needed, "%s: device name length %zu, then %zu", what, needed, needed2);
  TU_CHECKF(full[needed] == '\0' && strlen(full) == needed, "%s: device name not NUL-terminated at %zu", what,
            needed);
  full[needed] = '\0';
  printf("test_context: %s device name \"%s\"\n", what, full);

  /* Truncation: len bytes at most, NUL included, full length reported. */
  for (len = 1; len <= needed + 2 && len < sizeof buf; len += (len < 6 ? 1 : needed / 3 + 1)) {
    size_t keep = len - 1 < needed ? len - 1 : needed;
    memset(buf, CANARY, sizeof buf);
    needed2 = 0;
    TU_EXPECT_OK(gpuprims_context_device_name(ctx, buf, len, &needed2));
    TU_CHECKF(needed2 == needed, "%s: device_name(len %zu) reported %zu, expected %zu", what, len, needed2, needed);
    TU_CHECKF(memcmp(buf, full, keep) == 0 && buf[keep] == '\0', "%s: device_name(len %zu) wrong truncation",
              what, len);
    for (k = len; k < sizeof buf; k++)
      if (buf[k] != (char)CANARY) break;
    TU_CHECKF(k == sizeof buf, "%s: device_name(len %zu) wrote byte %zu", what, len, k);
  }
  /* len 0 with a real buffer: nothing written. */
  memset(buf, CANARY, sizeof buf);
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, buf, 0, &needed2));
  TU_CHECKF(buf[0] == (char)CANARY, "%s: device_name(buf, 0) wrote into buf", what);
  /* buf NULL with len > 0: a NULL argument; needed untouched. */
  needed2 = 777;
  TU_EXPECT_STATUS(gpuprims_context_device_name(ctx, NULL, 8, &needed2), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECKF(needed2 == 777, "%s: failed device_name wrote *needed", what);
  free(full);
}

/* Some work on ctx, so that a context is shown to be usable, not only created. */
static void check_usable(gpuprims_context *ctx, const char *what) {
  int32_t data[100], sum = 0, got = -1;
  int i;
  gpuprims_buffer *b;
  for (i = 0; i < 100; i++) data[i] = i * 3 - 7;
  for (i = 0; i < 100; i++) sum += data[i];
  b = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, data, 100);
  TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &got));
  TU_CHECKF(got == sum, "%s: SUM %ld, expected %ld", what, (long)got, (long)sum);
  TU_EXPECT_OK(gpuprims_context_synchronize(ctx));
  gpuprims_buffer_destroy(b);
}

int main(void) {
  gpuprims_context *ctx, *host, *cuda, *out;
  gpuprims_backend b;
  gpuprims_status s;
  char err[512];
  int i, on_cuda;
  static const gpuprims_backend bad_backends[] = {3, 4, 100, 0x7FFFFFFFu, 0xFFFFFFFFu};

  tu_init("test_context");

  /* AUTO (the test's main context; GPUPRIMS_BACKEND may override it). */
  ctx = tu_open_context();
  b = tu_backend_of(ctx);
  TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA || b == GPUPRIMS_BACKEND_HOST, "AUTO context reports backend %lu",
            (unsigned long)b);
  if (tu_env_backend_is("host"))
    TU_CHECKF(b == GPUPRIMS_BACKEND_HOST, "GPUPRIMS_BACKEND=host but the AUTO context is %s", tu_backend_name(b));
  if (tu_env_backend_is("cuda"))
    TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA, "GPUPRIMS_BACKEND=cuda but the AUTO context is %s", tu_backend_name(b));
  on_cuda = b == GPUPRIMS_BACKEND_CUDA;
  check_device_name(ctx, "AUTO");
  TU_EXPECT_OK(gpuprims_context_synchronize(ctx));
  check_usable(ctx, "AUTO");

  /* Streams. */
  TU_EXPECT_OK(gpuprims_context_set_stream(ctx, NULL));
  if (!on_cuda) {
    TU_EXPECT_STATUS(gpuprims_context_set_stream(ctx, (void *)(uintptr_t)0x1000), GPUPRIMS_STATUS_UNSUPPORTED);
    TU_EXPECT_OK(gpuprims_context_set_stream(ctx, NULL));
  }
  check_usable(ctx, "AUTO after set_stream(NULL)");

  /* HOST, explicitly: always available, whatever GPUPRIMS_BACKEND says. */
  host = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &host));
  TU_REQUIRE(host != NULL);
  b = 0xDEAD;
  TU_EXPECT_OK(gpuprims_context_backend(host, &b));
  TU_CHECKF(b == GPUPRIMS_BACKEND_HOST, "HOST context reports backend %lu", (unsigned long)b);
  check_device_name(host, "HOST");
  TU_EXPECT_STATUS(gpuprims_context_set_stream(host, (void *)(uintptr_t)0x1000), GPUPRIMS_STATUS_UNSUPPORTED);
  TU_EXPECT_OK(gpuprims_context_set_stream(host, NULL));
  TU_EXPECT_OK(gpuprims_context_synchronize(host));
  check_usable(host, "HOST");

  /* CUDA, explicitly: a device, or NO_DEVICE with a reason. */
  cuda = TU_SENTINEL_PTR(gpuprims_context);
  s = gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &cuda);
  if (s == GPUPRIMS_STATUS_OK) {
    TU_REQUIRE(cuda != NULL && cuda != TU_SENTINEL_PTR(gpuprims_context));
    b = 0xDEAD;
    TU_EXPECT_OK(gpuprims_context_backend(cuda, &b));
    TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA, "CUDA context reports backend %lu", (unsigned long)b);
    check_device_name(cuda, "CUDA");
    TU_EXPECT_OK(gpuprims_context_set_stream(cuda, NULL));
    TU_EXPECT_OK(gpuprims_context_synchronize(cuda));
    check_usable(cuda, "CUDA");
    gpuprims_context_destroy(cuda);

    /* A device index that does not exist. */
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS2(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 4096, &out), GPUPRIMS_STATUS_NO_DEVICE,
                      GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_context));
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS2(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, -1, &out), GPUPRIMS_STATUS_NO_DEVICE,
                      GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_context));
  } else {
    TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_NO_DEVICE);
    TU_CHECKF(cuda == TU_SENTINEL_PTR(gpuprims_context), "failed CUDA context_create wrote its out-parameter");
    tu_last_error_text(err, sizeof err);
    TU_CHECKF(err[0] != '\0', "NO_DEVICE without a reason in the last error");
    printf("test_context: no CUDA device: %s\n", err);
    TU_CHECKF(!on_cuda, "AUTO gave CUDA but CUDA explicitly gave NO_DEVICE");
  }

  /* Unknown backend values. */
  for (i = 0; i < (int)TU_ARRAY_LEN(bad_backends); i++) {
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS(gpuprims_context_create(bad_backends[i], 0, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECKF(out == TU_SENTINEL_PTR(gpuprims_context), "context_create(backend %lu) wrote its out-parameter",
              (unsigned long)bad_backends[i]);
    TU_CHECK(gpuprims_last_error(NULL, 0) > 0);
  }

  /* NULL arguments. */
  TU_EXPECT_STATUS(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  b = 0xDEAD;
  TU_EXPECT_STATUS(gpuprims_context_backend(NULL, &b), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(b == 0xDEAD);
  TU_EXPECT_STATUS(gpuprims_context_backend(ctx, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  {
    size_t needed = 777;
    char nb[16];
    memset(nb, CANARY, sizeof nb);
    TU_EXPECT_STATUS(gpuprims_context_device_name(NULL, nb, sizeof nb, &needed), GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_CHECK(needed == 777 && nb[0] == (char)CANARY);
  }
  TU_EXPECT_STATUS(gpuprims_context_set_stream(NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_synchronize(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  gpuprims_context_destroy(NULL); /* a no-op */

  /* A buffer handle passed where a context is expected: INVALID_ARGUMENT, not a crash. */
  {
    uint8_t one = 1;
    gpuprims_buffer *buf = tu_buffer_from_host(host, GPUPRIMS_DTYPE_U8, &one, 1);
    gpuprims_context *fake = (gpuprims_context *)(void *)buf;
    size_t needed = 777;
    char nb[16];
    b = 0xDEAD;
    TU_EXPECT_STATUS(gpuprims_context_backend(fake, &b), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(b == 0xDEAD);
    memset(nb, CANARY, sizeof nb);
    TU_EXPECT_STATUS(gpuprims_context_device_name(fake, nb, sizeof nb, &needed), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(needed == 777 && nb[0] == (char)CANARY);
    TU_EXPECT_STATUS(gpuprims_context_synchronize(fake), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(gpuprims_context_set_stream(fake, NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    gpuprims_buffer_destroy(buf);
  }

  /* Many contexts, created and destroyed; two alive at once are independent. */
  for (i = 0; i < 32; i++) {
    gpuprims_context *c = NULL;
    if (!TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &c))) break;
    if (i % 8 == 0) check_usable(c, "HOST (loop)");
    gpuprims_context_destroy(c);
  }
  check_usable(host, "HOST, after the others were destroyed");
  check_usable(ctx, "AUTO, after the others were destroyed");

  gpuprims_context_destroy(host);
  gpuprims_context_destroy(ctx);
  return tu_finish();
}
