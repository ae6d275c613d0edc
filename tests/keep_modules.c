/*
 * keep_modules.c - preloaded in the sanitizer run only: dlclose() does
 * nothing, so that the modules MPICH/UCX load at run time stay mapped at
 * exit and LeakSanitizer can name them (tests/lsan.supp suppresses their
 * internal allocations; passion's own leaks are still reported).
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
