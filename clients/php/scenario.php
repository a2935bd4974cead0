<?php
/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   composer dump-autoload
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> php scenario.php
 * Prints one JSON line: what it created, listed and read, and what an OAuth access token could read.
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use Records\Client\Api\FieldsApi;
use Records\Client\Api\HistoryApi;
use Records\Client\Api\ModulesApi;
use Records\Client\Api\OauthApi;
use Records\Client\Api\RecordsApi;
use Records\Client\Api\SpacesApi;
use Records\Client\ApiException;
use Records\Client\Configuration;
use Records\Client\Model\FieldCreate;
use Records\Client\Model\FieldType;
use Records\Client\Model\ModuleCreate;
use Records\Client\Model\OAuthClientCreate;
use Records\Client\Model\RecordCreate;
use Records\Client\Model\RecordUpdate;
use Records\Client\Model\SpaceCreate;

const REDIRECT_URI = 'http://127.0.0.1/callback';

function setting(string $name): string
{
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "$name is not set\n");
        exit(1);
    }
    return $value;
}

/** The code from the 302 the authorize endpoint answers a bearer-token caller with. */
function authorizationCode(Configuration $admin, string $clientId, string $state): string
{
    // Guzzle must not follow the redirect (to the client's redirect URI); the client reports it as an ApiException.
    $oauth = new OauthApi(new GuzzleHttp\Client(['allow_redirects' => false]), $admin);
    try {
        $oauth->authorize(response_type: 'code', client_id: $clientId, redirect_uri: REDIRECT_URI, state: $state);
    } catch (ApiException $e) {
        if ($e->getCode() !== 302) {
            throw $e;
        }
        parse_str((string) parse_url($e->getResponseHeaders()['Location'][0], PHP_URL_QUERY), $query);
        if (($query['state'] ?? null) !== $state) {
            throw new RuntimeException('state not returned');
        }
        return $query['code'];
    }
    throw new RuntimeException('authorize did not redirect');
}

$url = setting('RECORDS_URL');
$admin = (new Configuration())->setHost($url)->setAccessToken(setting('RECORDS_TOKEN'));
$http = new GuzzleHttp\Client();
$records = new RecordsApi($http, $admin);

$space = (new SpacesApi($http, $admin))->createSpace(new SpaceCreate(['name' => 'Scenario php']));
$module = (new ModulesApi($http, $admin))->createModule(
    new ModuleCreate(['space_id' => $space->getId(), 'name' => 'Tickets'])
);
$status = (new FieldsApi($http, $admin))->createField(
    new FieldCreate(['module_id' => $module->getId(), 'name' => 'Status', 'type' => FieldType::TEXT])
);
$created = [];
foreach (['Printer' => 'open', 'Scanner' => 'open', 'Router' => 'closed'] as $name => $value) {
    $created[$name] = $records->createRecord(new RecordCreate([
        'module_id' => $module->getId(),
        'name' => $name,
        'fields' => ['status' => $value],
    ]))->getId();
}
$records->updateRecordById($created['Printer'], new RecordUpdate(['fields' => ['status' => 'closed']]));

$closed = $records->listModuleRecords($module->getId(), filter: 'status=closed', order: 'name;ASC');
$history = (new HistoryApi($http, $admin))->listFieldHistory(
    $module->getId(),
    $created['Printer'],
    filter: 'field=fields.' . $status->getKey()
);

$client = (new OauthApi($http, $admin))->createOAuthClient(new OAuthClientCreate([
    'client_name' => 'Scenario php',
    'redirect_uris' => [REDIRECT_URI],
    'scope' => 'record:read',
]));
$code = authorizationCode($admin, $client->getClientId(), 'scenario');
// The client authenticates in the body (client_id, client_secret), the token endpoint's other way beside Basic.
$issued = (new OauthApi($http, (new Configuration())->setHost($url)))->exchangeToken(
    grant_type: 'authorization_code',
    code: $code,
    redirect_uri: REDIRECT_URI,
    client_id: $client->getClientId(),
    client_secret: $client->getClientSecret()
);
$asApp = (new Configuration())->setHost($url)->setAccessToken($issued->getAccessToken());
$seen = (new RecordsApi($http, $asApp))->listRecords(filter: 'moduleId=' . $module->getId(), order: 'name;ASC');

$names = fn (array $items) => array_map(fn ($record) => $record->getName(), $items);
echo json_encode([
    'space' => $space->getName(),
    'module' => $module->getName(),
    'field' => $status->getKey(),
    'closed' => $names($closed->getItems()),
    'history' => array_map(fn ($change) => [$change->getOldValue(), $change->getNewValue()], $history->getItems()),
    'oauth' => [
        'tokenType' => $issued->getTokenType(),
        'scope' => $issued->getScope(),
        'records' => $names($seen->getItems()),
    ],
]), "\n";
