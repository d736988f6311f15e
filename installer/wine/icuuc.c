/* icuuc.dll for Wine 8.0 (Debian 12), which lacks Windows' system ICU: the converter functions
 * Qt 6.10+ imports, each answering "no such converter".
 *
 * QtCore 6.10 and later link against Windows' own icuuc.dll (Windows 10 1703 and later ship it)
 * for QStringConverter's legacy codecs, so QtCore, and with it every Qt module, fails to load under
 * Wine 8.0 ("DLL load failed ... Module not found"). UTF-8/16/32 and Latin-1 never go through ICU;
 * with ucnv_open failing, Qt treats any other codec as unavailable. build_windows_wine.sh compiles
 * this with mingw-w64 into the Wine prefixes' system32. It is never part of the bundle.
 */
#include <stddef.h>
#include <stdint.h>

typedef int UErrorCode;
typedef uint16_t UChar;
typedef int32_t UChar32;
typedef int8_t UBool;
typedef struct UConverter UConverter;
typedef void (*UConverterCallback)(void);
#define U_FILE_ACCESS_ERROR 4
#define U_UNSUPPORTED_ERROR 16
#define EXPORT __declspec(dllexport)

static void fail(UErrorCode *err, int code) { if (err && *err <= 0) *err = code; }

EXPORT UConverter *ucnv_open(const char *name, UErrorCode *err) { (void)name; fail(err, U_FILE_ACCESS_ERROR); return NULL; }
EXPORT void ucnv_close(UConverter *c) { (void)c; }
EXPORT void ucnv_reset(UConverter *c) { (void)c; }
EXPORT int8_t ucnv_getMaxCharSize(const UConverter *c) { (void)c; return 1; }
EXPORT const char *ucnv_getName(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_UNSUPPORTED_ERROR); return NULL; }
EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *err)
{ (void)name; (void)standard; fail(err, U_UNSUPPORTED_ERROR); return NULL; }
EXPORT const char *ucnv_getAvailableName(int32_t n) { (void)n; return NULL; }
EXPORT int32_t ucnv_countAvailable(void) { return 0; }
EXPORT int32_t ucnv_toUCountPending(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_UNSUPPORTED_ERROR); return 0; }
EXPORT int32_t ucnv_fromUCountPending(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_UNSUPPORTED_ERROR); return 0; }
EXPORT void ucnv_getToUCallBack(const UConverter *c, UConverterCallback *action, const void **context)
{ (void)c; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_getFromUCallBack(const UConverter *c, UConverterCallback *action, const void **context)
{ (void)c; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_setToUCallBack(UConverter *c, UConverterCallback action, const void *context,
                                UConverterCallback *old, const void **oldContext, UErrorCode *err)
{ (void)c; (void)action; (void)context; (void)old; (void)oldContext; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void ucnv_setFromUCallBack(UConverter *c, UConverterCallback action, const void *context,
                                  UConverterCallback *old, const void **oldContext, UErrorCode *err)
{ (void)c; (void)action; (void)context; (void)old; (void)oldContext; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void ucnv_toUnicode(UConverter *c, UChar **target, const UChar *targetLimit, const char **source,
                           const char *sourceLimit, int32_t *offsets, UBool flush, UErrorCode *err)
{ (void)c; (void)target; (void)targetLimit; (void)source; (void)sourceLimit; (void)offsets; (void)flush; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void ucnv_fromUnicode(UConverter *c, char **target, const char *targetLimit, const UChar **source,
                             const UChar *sourceLimit, int32_t *offsets, UBool flush, UErrorCode *err)
{ (void)c; (void)target; (void)targetLimit; (void)source; (void)sourceLimit; (void)offsets; (void)flush; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void ucnv_cbToUWriteUChars(void *args, const UChar *source, int32_t length, int32_t offsetIndex, UErrorCode *err)
{ (void)args; (void)source; (void)length; (void)offsetIndex; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void ucnv_cbFromUWriteUChars(void *args, const UChar **source, const UChar *sourceLimit, int32_t offsetIndex, UErrorCode *err)
{ (void)args; (void)source; (void)sourceLimit; (void)offsetIndex; fail(err, U_UNSUPPORTED_ERROR); }
EXPORT void UCNV_FROM_U_CALLBACK_SUBSTITUTE(const void *context, void *args, const UChar *codeUnits, int32_t length,
                                            UChar32 codePoint, int reason, UErrorCode *err)
{ (void)context; (void)args; (void)codeUnits; (void)length; (void)codePoint; (void)reason; (void)err; }
EXPORT void UCNV_TO_U_CALLBACK_SUBSTITUTE(const void *context, void *args, const char *codeUnits, int32_t length,
                                          int reason, UErrorCode *err)
{ (void)context; (void)args; (void)codeUnits; (void)length; (void)reason; (void)err; }
