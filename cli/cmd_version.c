// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf -V, --version: what this xnf is (scripts/version.sh at build time),
 * the libbpf it runs with, the libxdp it was built with (libxdp 1.3 has no
 * call that returns its version at run time; its pkg-config version is
 * recorded instead), and the schema of the tables it reads and writes: an
 * instance pinned by an xnf of another schema is refused.
 */
#include <bpf/libbpf.h>

#include "cli.h"
#include "version.h" /* generated: XNF_VERSION, XNF_LIBXDP_VERSION */

int cli_version(void)
{
	char libbpf[32];

	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(),
		 libbpf_minor_version());
	open_json_doc("xnf/version/1");
	print_string(PRINT_ANY, "version", "xnf %s\n", XNF_VERSION);
	print_string(PRINT_ANY, "libbpf", "libbpf %s\n", libbpf);
	print_string(PRINT_ANY, "libxdp_build", "libxdp %s (at build time)\n",
		     XNF_LIBXDP_VERSION);
	print_uint(PRINT_ANY, "table_schema", "table schema %llu\n", XNF_SCHEMA);
	close_json_object();
	return 0;
}
