// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* registry.c - the userspace NFs by name, and their instances. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xnf.h"
#include "unf.h"

/* The userspace NFs, in the order `xnf worker help` lists them: NAME is
 * xnf_unf_NAME_ops of userspace/nf_NAME.c. */
/* clang-format off */
#define XNF_UNFS(X) X(firewall) X(l3fwd) X(l2fwd) X(macswap) X(ratelimit)
/* clang-format on */

#define XNF_UNF_DECL_(name) \
	extern const struct xnf_unf_ops xnf_unf_##name##_ops;
XNF_UNFS(XNF_UNF_DECL_)

#define XNF_UNF_ENTRY_(name) &xnf_unf_##name##_ops,
const struct xnf_unf_ops *const xnf_unf_registry[] = {
	XNF_UNFS(XNF_UNF_ENTRY_) NULL,
};

const struct xnf_unf_ops *xnf_unf_find(const char *name)
{
	int i;

	for (i = 0; xnf_unf_registry[i]; i++)
		if (!strcmp(xnf_unf_registry[i]->name, name))
			return xnf_unf_registry[i];
	return NULL;
}

/* Private state on its own cache lines: the NFs of neighbouring workers'
 * instances must not share one. */
#define UNF_ALIGN 64

int xnf_unf_new(const struct xnf_unf_ops *ops, const struct xnf_unf_env *env,
		struct xnf_unf **out, char *err, size_t errlen)
{
	struct xnf_unf *nf;
	size_t size;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	nf = calloc(1, sizeof(*nf));
	if (!nf)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	nf->ops = ops;
	nf->env = *env;
	nf->env.args = NULL;
	ret = -ENOMEM;
	if (env->args && !(nf->env.args = strdup(env->args)))
		goto out_free;
	if (ops->priv_size) {
		size = (ops->priv_size + UNF_ALIGN - 1) &
		       ~(size_t)(UNF_ALIGN - 1);
		nf->priv = aligned_alloc(UNF_ALIGN, size);
		if (!nf->priv)
			goto out_free;
		memset(nf->priv, 0, size);
	}
	ret = ops->init ? ops->init(nf, &nf->env, err, errlen) : 0;
	if (ret)
		goto out_free;
	*out = nf;
	return 0;
out_free:
	/* A failure the NF gave no text for: its errno's. */
	if (err && errlen && !err[0])
		xnf_errf(err, errlen, ret, "%s", strerror(-ret));
	free(nf->priv);
	free((char *)nf->env.args);
	free(nf);
	return ret;
}

void xnf_unf_free(struct xnf_unf *nf)
{
	if (!nf)
		return;
	if (nf->ops->fini)
		nf->ops->fini(nf);
	free(nf->priv);
	free((char *)nf->env.args);
	free(nf);
}
