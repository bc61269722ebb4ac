/*
 * candec_fleet: a mosquitto 2.0 plugin for the fleet's cloud broker
 * (fleet.conf), beside its acl_file (fleet.acl).
 *
 * mosquitto 2.0's acl_file has no rule for subscriptions: it grants
 * every one, also a car's subscription to the ingest's shared group
 * ($share/<group>/fleet/+/yukart/window), and mosquitto then hands that
 * car every other window of the group, which the car's read ACL drops.
 * The cars had their acknowledgements, so nothing is sent again: half of
 * every car's windows are gone. A group name is no secret.
 *
 * This plugin refuses, before fleet.acl is asked:
 *   - every subscription of a client that is not a reader (the users
 *     named by plugin_opt_readers, the ingest's certificates), but a
 *     car's to its own policy topic, fleet/<its name>/yukart/policy,
 *     exactly (its bridge takes campaigns from there), and a pusher's
 *     (plugin_opt_pushers: who pushes campaigns) that is not shared: a
 *     car subscribes to nothing else, shared or not;
 *   - every write of a client that is not a reader or a pusher on any
 *     car's policy topic, fleet/+/yukart/policy: a car cannot push a
 *     policy to itself, whatever fleet.acl's "pattern write fleet/%u/#"
 *     grants (docs/campaigns.md);
 *   - everything (publish, subscribe, delivery) of a client whose user
 *     name, the common name of its certificate, is empty or holds '/',
 *     '+' or '#': such a name is no single topic level, and fleet.acl's
 *     "pattern write fleet/%u/#" would let "kart02/yukart" write into
 *     kart02's stream.
 * Everything else it leaves to fleet.acl.
 *
 * Build (Debian: apt-get install gcc mosquitto-dev libmosquitto-dev):
 *   cc -shared -fPIC -O2 -Wall -Wextra -o candec_fleet.so candec_fleet.c
 * and install the .so where fleet.conf's plugin line says. The readers
 * are read when mosquitto starts: restart it after changing them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <mosquitto_plugin.h>

/* The option that names the readers, separated by spaces or commas;
 * it may be given more than once. */
#define READERS_OPTION "readers"
#define PUSHERS_OPTION "pushers"
#define SEPARATORS " ,\t"
/* A car's policy topic is fleet/<name>/POLICY_SUFFIX. */
#define POLICY_PREFIX "fleet/"
#define POLICY_SUFFIX "/yukart/policy"

static mosquitto_plugin_id_t *plugin_id;
static char **readers;
static int reader_count;
static char **pushers;
static int pusher_count;
/* The last invalid name logged: a car with a bad certificate publishes
 * many times a second, and its name is logged once in a row. */
static char *last_logged;

/* valid_name: a name that is one whole topic level. */
static bool valid_name(const char *name)
{
	return name != NULL && name[0] != '\0' && strpbrk(name, "/+#") == NULL;
}

static bool listed(char **names, int count, const char *name)
{
	for(int i = 0; i < count; i++){
		if(strcmp(names[i], name) == 0){
			return true;
		}
	}
	return false;
}

static bool is_reader(const char *name)
{
	return listed(readers, reader_count, name);
}

/* policy_vehicle: when topic is a car's policy topic,
 * fleet/<vehicle>/yukart/policy, the length of <vehicle> (> 0); else 0. */
static size_t policy_vehicle(const char *topic)
{
	size_t n, pre = strlen(POLICY_PREFIX), suf = strlen(POLICY_SUFFIX);
	if(topic == NULL || strncmp(topic, POLICY_PREFIX, pre) != 0){
		return 0;
	}
	n = strlen(topic);
	if(n <= pre + suf || strcmp(topic + n - suf, POLICY_SUFFIX) != 0){
		return 0;
	}
	n -= pre + suf;
	if(memchr(topic + pre, '/', n) != NULL){
		return 0;
	}
	return n;
}

/* own_policy_topic: topic is fleet/<name>/yukart/policy. */
static bool own_policy_topic(const char *topic, const char *name)
{
	size_t n = policy_vehicle(topic);
	return n > 0 && n == strlen(name) && strncmp(topic + strlen(POLICY_PREFIX), name, n) == 0;
}

static void log_invalid(const char *name)
{
	const char *shown = name != NULL ? name : "";
	if(last_logged != NULL && strcmp(last_logged, shown) == 0){
		return;
	}
	free(last_logged);
	last_logged = strdup(shown);
	mosquitto_log_printf(MOSQ_LOG_WARNING,
			"candec_fleet: refused everything of the client with certificate name \"%s\": empty, or holds '/', '+' or '#'",
			shown);
}

static int on_acl_check(int event, void *event_data, void *userdata)
{
	struct mosquitto_evt_acl_check *ed = event_data;
	const char *name = mosquitto_client_username(ed->client);

	(void)event;
	(void)userdata;
	if(!valid_name(name)){
		log_invalid(name);
		return MOSQ_ERR_ACL_DENIED;
	}
	if(is_reader(name)){
		return MOSQ_ERR_PLUGIN_DEFER;
	}
	if(ed->access == MOSQ_ACL_SUBSCRIBE){
		bool pusher = listed(pushers, pusher_count, name);
		bool shared = ed->topic != NULL && strncmp(ed->topic, "$share/", 7) == 0;
		if((pusher && !shared) || own_policy_topic(ed->topic, name)){
			return MOSQ_ERR_PLUGIN_DEFER;
		}
		mosquitto_log_printf(MOSQ_LOG_NOTICE,
				"candec_fleet: refused the subscription of %s to %s: not a reader",
				name, ed->topic != NULL ? ed->topic : "");
		return MOSQ_ERR_ACL_DENIED;
	}
	if(ed->access == MOSQ_ACL_WRITE && policy_vehicle(ed->topic) > 0 && !listed(pushers, pusher_count, name)){
		mosquitto_log_printf(MOSQ_LOG_NOTICE,
				"candec_fleet: refused the publish of %s on %s: only a pusher writes a policy topic",
				name, ed->topic);
		return MOSQ_ERR_ACL_DENIED;
	}
	return MOSQ_ERR_PLUGIN_DEFER;
}

static void free_names(char ***names, int *count)
{
	for(int i = 0; i < *count; i++){
		free((*names)[i]);
	}
	free(*names);
	*names = NULL;
	*count = 0;
}

static void free_readers(void)
{
	free_names(&readers, &reader_count);
	free_names(&pushers, &pusher_count);
	free(last_logged);
	last_logged = NULL;
}

/* add_names adds the names of one option value to names. */
static int add_names(const char *option, const char *value, char ***names, int *count)
{
	char *copy = strdup(value);
	char *save = NULL;

	if(copy == NULL){
		return MOSQ_ERR_NOMEM;
	}
	for(char *name = strtok_r(copy, SEPARATORS, &save); name != NULL; name = strtok_r(NULL, SEPARATORS, &save)){
		char **grown;
		if(!valid_name(name)){
			mosquitto_log_printf(MOSQ_LOG_ERR,
					"candec_fleet: plugin_opt_%s: \"%s\" is no certificate name (it holds '/', '+' or '#')", option, name);
			free(copy);
			return MOSQ_ERR_INVAL;
		}
		grown = realloc(*names, (size_t)(*count + 1) * sizeof(**names));
		if(grown == NULL){
			free(copy);
			return MOSQ_ERR_NOMEM;
		}
		*names = grown;
		(*names)[*count] = strdup(name);
		if((*names)[*count] == NULL){
			free(copy);
			return MOSQ_ERR_NOMEM;
		}
		(*count)++;
	}
	free(copy);
	return MOSQ_ERR_SUCCESS;
}

int mosquitto_plugin_version(int supported_version_count, const int *supported_versions)
{
	(void)supported_version_count;
	(void)supported_versions;
	return 5;
}

int mosquitto_plugin_init(mosquitto_plugin_id_t *identifier, void **userdata, struct mosquitto_opt *options, int option_count)
{
	(void)userdata;
	plugin_id = identifier;
	for(int i = 0; i < option_count; i++){
		int rc = MOSQ_ERR_SUCCESS;
		if(strcmp(options[i].key, READERS_OPTION) == 0){
			rc = add_names(READERS_OPTION, options[i].value, &readers, &reader_count);
		}else if(strcmp(options[i].key, PUSHERS_OPTION) == 0){
			rc = add_names(PUSHERS_OPTION, options[i].value, &pushers, &pusher_count);
		}else{
			mosquitto_log_printf(MOSQ_LOG_ERR, "candec_fleet: unknown option plugin_opt_%s", options[i].key);
			rc = MOSQ_ERR_INVAL;
		}
		if(rc != MOSQ_ERR_SUCCESS){
			free_readers();
			return rc;
		}
	}
	if(reader_count == 0){
		mosquitto_log_printf(MOSQ_LOG_ERR, "candec_fleet: plugin_opt_readers names no reader: nobody could subscribe");
		return MOSQ_ERR_INVAL;
	}
	return mosquitto_callback_register(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL, NULL);
}

int mosquitto_plugin_cleanup(void *userdata, struct mosquitto_opt *options, int option_count)
{
	(void)userdata;
	(void)options;
	(void)option_count;
	mosquitto_callback_unregister(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL);
	free_readers();
	return MOSQ_ERR_SUCCESS;
}
